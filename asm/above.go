package asm

// IndexAbove returns the index of the first element of x greater than t,
// or len(x) if there is none. NaN is never greater than t, and no element
// is greater than a NaN t. It is the scan of a top-k selection over a
// row of scores once the heap is full: t is the worst kept score, and
// only an element above it is offered to the heap.
func IndexAbove(x []float32, t float32) int {
	return k.indexAbove(x, t)
}

func indexAboveRef(x []float32, t float32) int {
	for i, v := range x {
		if v > t {
			return i
		}
	}
	return len(x)
}

// IndexBelowU16 returns the index of the first element of x less than t,
// or len(x) if there is none: the scan of a top-k selection over
// fast-scan sums (FastScan4), with t the smallest sum that would not
// enter the selection.
func IndexBelowU16(x []uint16, t uint16) int {
	if t == 0 {
		return len(x)
	}
	return k.indexBelowU16(x, t)
}

func indexBelowU16Ref(x []uint16, t uint16) int {
	for i, v := range x {
		if v < t {
			return i
		}
	}
	return len(x)
}
