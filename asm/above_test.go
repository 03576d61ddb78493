package asm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestIndexAbove checks every level against indexAboveRef over every
// length up to 200 and every position of the first hit (before, inside
// and past each vector width), with NaNs, infinities, equal values and
// slices that end at an unaligned offset of a larger array.
func TestIndexAbove(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 17))
	for _, l := range SupportedLevels() {
		restore, err := SetLevel(l)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n <= 200; n++ {
			for trial := 0; trial < 6; trial++ {
				buf := make([]float32, n+3)
				off := trial % 3
				x := buf[off : off+n]
				for i := range x {
					x[i] = float32(rng.IntN(7) - 3)
				}
				th := float32(3)
				switch trial {
				case 1:
					th = float32(math.NaN())
				case 2:
					th = -4 // every element is above
				case 3:
					th = 2
				}
				if n > 0 && trial >= 3 {
					x[rng.IntN(n)] = float32(math.NaN())
					p := rng.IntN(n)
					x[p] = 5 // a hit at p (unless an earlier 3 > 2 is already one)
					if trial == 5 {
						x[p] = float32(math.Inf(1))
					}
				}
				buf[len(buf)-1] = 100 // past the end: never reported
				if off+n < len(buf)-1 {
					buf[off+n] = 100
				}
				got, want := IndexAbove(x, th), indexAboveRef(x, th)
				if got != want {
					t.Fatalf("%s: n=%d trial %d t=%v: got %d, want %d (x=%v)", l, n, trial, th, got, want, x)
				}
			}
		}
		restore()
	}
}

func FuzzIndexAbove(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64}, float32(1))
	f.Fuzz(func(t *testing.T, raw []byte, th float32) {
		x := make([]float32, len(raw)/4)
		for i := range x {
			x[i] = math.Float32frombits(uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24)
		}
		want := indexAboveRef(x, th)
		for _, l := range SupportedLevels() {
			restore, err := SetLevel(l)
			if err != nil {
				t.Fatal(err)
			}
			got := IndexAbove(x, th)
			restore()
			if got != want {
				t.Fatalf("%s: got %d, want %d", l, got, want)
			}
		}
	})
}

func BenchmarkIndexAbove(b *testing.B) {
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i % 100)
	}
	for _, l := range SupportedLevels() {
		restore, _ := SetLevel(l)
		b.Run(fmt.Sprint(l), func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for i := 0; i < b.N; i++ {
				if IndexAbove(x, 1000) != len(x) {
					b.Fatal("hit")
				}
			}
		})
		restore()
	}
}

// TestIndexBelowU16 checks every level against indexBelowU16Ref over
// every length up to 200, thresholds 0, 1, 0xFFFF and in between, the
// first hit at every position, and unaligned slice ends.
func TestIndexBelowU16(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 19))
	for _, l := range SupportedLevels() {
		restore, err := SetLevel(l)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n <= 200; n++ {
			for trial := 0; trial < 7; trial++ {
				buf := make([]uint16, n+3)
				off := trial % 3
				x := buf[off : off+n]
				for i := range x {
					x[i] = uint16(1000 + rng.IntN(60000))
				}
				th := uint16(1000)
				switch trial {
				case 1:
					th = 0
				case 2:
					th = 0xFFFF
				case 3:
					th = 1
					if n > 0 {
						x[rng.IntN(n)] = 0
					}
				case 4, 5, 6:
					if n > 0 {
						p := rng.IntN(n)
						x[p] = uint16(rng.IntN(1000)) // a hit at p
						if trial == 6 {
							x[p] = 999 // just below
						}
					}
				}
				if off+n < len(buf) {
					buf[off+n] = 0 // past the end: never reported
				}
				got, want := IndexBelowU16(x, th), indexBelowU16Ref(x, th)
				if th == 0 {
					want = len(x)
				}
				if got != want {
					t.Fatalf("%s: n=%d trial %d t=%d: got %d, want %d", l, n, trial, th, got, want)
				}
			}
		}
		restore()
	}
}

func FuzzIndexBelowU16(f *testing.F) {
	f.Add([]byte{1, 0, 2, 0, 0, 1}, uint16(2))
	f.Fuzz(func(t *testing.T, raw []byte, th uint16) {
		x := make([]uint16, len(raw)/2)
		for i := range x {
			x[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
		}
		want := indexBelowU16Ref(x, th)
		for _, l := range SupportedLevels() {
			restore, err := SetLevel(l)
			if err != nil {
				t.Fatal(err)
			}
			got := IndexBelowU16(x, th)
			restore()
			if got != want {
				t.Fatalf("%s: got %d, want %d", l, got, want)
			}
		}
	})
}
