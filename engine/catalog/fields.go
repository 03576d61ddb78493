package catalog

import (
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/stratasearch/strata/engine/contract"
)

// FieldType is the type of an indexed metadata field
// (engine.CollectionOptions.IndexedFields).
type FieldType string

// Indexed metadata field types.
const (
	// FieldKeyword is a string (or string-list) field matched by eq, in,
	// prefix and exists.
	FieldKeyword FieldType = "keyword"
	// FieldBool is a boolean field matched by eq, in and exists.
	FieldBool FieldType = "bool"
	// FieldNumber is a numeric field matched by eq, in, range and exists.
	FieldNumber FieldType = "number"
)

// FieldIndex holds the per-value bitmaps of a collection's indexed fields
// over rows (MemTable versions, or a catalog's keys): keyword and bool
// fields get one roaring bitmap per value (a list value's every element),
// number fields a column of (row, value) pairs in row order, and every
// indexed field a bitmap of the rows where it is present. Not safe for
// concurrent use while rows are added (the hot index guards it with its
// mutex; a catalog's is complete before it is shared).
type FieldIndex struct {
	types   map[string]FieldType
	values  map[string]map[string]*roaring.Bitmap // keyword / bool: field → value → versions
	nums    map[string]*numColumn
	present map[string]*roaring.Bitmap
}

type numColumn struct {
	vers []uint32
	vals []float64
}

// NewFieldIndex returns an empty index of the fields in types.
func NewFieldIndex(types map[string]FieldType) *FieldIndex {
	fi := &FieldIndex{types: types, values: map[string]map[string]*roaring.Bitmap{},
		nums: map[string]*numColumn{}, present: map[string]*roaring.Bitmap{}}
	for f, t := range types {
		fi.present[f] = roaring.New()
		if t == FieldNumber {
			fi.nums[f] = &numColumn{}
		} else {
			fi.values[f] = map[string]*roaring.Bitmap{}
		}
	}
	return fi
}

func (fi *FieldIndex) addValue(f, key string, v uint32) {
	m := fi.values[f]
	b := m[key]
	if b == nil {
		b = roaring.New()
		m[key] = b
	}
	b.Add(v)
}

// Add indexes row v's metadata (rows are added in ascending order).
func (fi *FieldIndex) Add(v uint32, meta map[string]contract.Value) {
	fi.AddFunc(v, func(k string) (contract.Value, bool) { val, ok := meta[k]; return val, ok })
}

// AddFunc is Add over metadata read through get (Row.Value): only the
// indexed fields are looked up.
func (fi *FieldIndex) AddFunc(v uint32, get func(field string) (contract.Value, bool)) {
	for f, t := range fi.types {
		val, ok := get(f)
		if !ok {
			continue
		}
		fi.present[f].Add(v)
		switch t {
		case FieldKeyword:
			if s, ok := val.Str(); ok {
				fi.addValue(f, s, v)
			} else if l, ok := val.List(); ok {
				for _, s := range l {
					fi.addValue(f, s, v)
				}
			}
		case FieldBool:
			if b, ok := val.Boolean(); ok {
				fi.addValue(f, strconv.FormatBool(b), v)
			}
		case FieldNumber:
			if x, ok := val.Num(); ok {
				c := fi.nums[f]
				c.vers = append(c.vers, v)
				c.vals = append(c.vals, x)
			}
		}
	}
}

// Compile turns f into the bitmap of rows < n it matches, with
// contract.Filter.Match's semantics, when every leaf names an indexed
// field; ok is false otherwise (the caller then evaluates Match per
// row). Cost: bitmap operations on the touched values, plus a scan of
// the column for number leaves.
func (fi *FieldIndex) Compile(f *contract.Filter, n uint32) (*roaring.Bitmap, bool) {
	switch f.Op {
	case contract.OpAnd, contract.OpOr:
		var acc *roaring.Bitmap
		for i := range f.Children {
			b, ok := fi.Compile(&f.Children[i], n)
			if !ok {
				return nil, false
			}
			switch {
			case acc == nil:
				acc = b
			case f.Op == contract.OpAnd:
				acc.And(b)
			default:
				acc.Or(b)
			}
		}
		if acc == nil {
			if f.Op == contract.OpAnd {
				acc = roaring.New()
				acc.AddRange(0, uint64(n))
			} else {
				acc = roaring.New()
			}
		}
		return acc, true
	case contract.OpNot:
		if len(f.Children) != 1 {
			return nil, false
		}
		b, ok := fi.Compile(&f.Children[0], n)
		if !ok {
			return nil, false
		}
		all := roaring.New()
		all.AddRange(0, uint64(n))
		all.AndNot(b)
		return all, true
	}
	t, ok := fi.types[f.Field]
	if !ok {
		return nil, false
	}
	switch f.Op {
	case contract.OpExists:
		return fi.present[f.Field].Clone(), true
	case contract.OpEq:
		return fi.eq(f.Field, t, f.Value), true
	case contract.OpIn:
		acc := roaring.New()
		for _, v := range f.Values {
			acc.Or(fi.eq(f.Field, t, v))
		}
		return acc, true
	case contract.OpRange:
		acc := roaring.New()
		if t != FieldNumber {
			return acc, true
		}
		c := fi.nums[f.Field]
		for i, x := range c.vals {
			if (f.GT == nil || x > *f.GT) && (f.GTE == nil || x >= *f.GTE) &&
				(f.LT == nil || x < *f.LT) && (f.LTE == nil || x <= *f.LTE) {
				acc.Add(c.vers[i])
			}
		}
		return acc, true
	case contract.OpPrefix:
		acc := roaring.New()
		p, ok := f.Value.Str()
		if t != FieldKeyword || !ok {
			return acc, true
		}
		for s, b := range fi.values[f.Field] {
			if strings.HasPrefix(s, p) {
				acc.Or(b)
			}
		}
		return acc, true
	}
	return nil, false
}

// eq is the bitmap of versions whose field equals want (Match's eq).
func (fi *FieldIndex) eq(field string, t FieldType, want contract.Value) *roaring.Bitmap {
	key, ok := "", false
	switch t {
	case FieldKeyword:
		key, ok = want.Str()
	case FieldBool:
		var b bool
		if b, ok = want.Boolean(); ok {
			key = strconv.FormatBool(b)
		}
	case FieldNumber:
		acc := roaring.New()
		if x, ok := want.Num(); ok {
			c := fi.nums[field]
			for i, y := range c.vals {
				if y == x {
					acc.Add(c.vers[i])
				}
			}
		}
		return acc
	}
	if b := fi.values[field][key]; ok && b != nil {
		return b.Clone()
	}
	return roaring.New()
}
