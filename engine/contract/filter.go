package contract

import (
	"encoding/json"
	"math"
	"strings"
)

// FilterOp names a filter node's operator.
type FilterOp string

const (
	OpEq     FilterOp = "eq"     // field equals Value (a scalar; for a list field, the list contains it)
	OpIn     FilterOp = "in"     // field equals one of Values (scalars)
	OpRange  FilterOp = "range"  // numeric field within the bounds GT/GTE/LT/LTE
	OpPrefix FilterOp = "prefix" // string field starts with Value (a string)
	OpExists FilterOp = "exists" // field is present
	OpAnd    FilterOp = "and"    // every child matches (≥ 1 child)
	OpOr     FilterOp = "or"     // some child matches (≥ 1 child)
	OpNot    FilterOp = "not"    // the single child does not match
)

// MaxFilterDepth bounds the nesting of a filter tree; MaxFilterNodes its size.
const (
	MaxFilterDepth = 32
	MaxFilterNodes = 1024
)

// Filter is a predicate tree on document metadata. Exactly the fields its Op
// uses are set. JSON form: an object with exactly one key, the operator:
//
//	{"eq":{"field":"lang","value":"go"}}
//	{"in":{"field":"lang","values":["go","rust"]}}
//	{"range":{"field":"lines","gte":10,"lt":200}}
//	{"prefix":{"field":"path","value":"src/"}}
//	{"exists":"generated"}
//	{"and":[F,…]}  {"or":[F,…]}  {"not":F}
//
// Values of eq / in are JSON scalars (string, number, boolean). An unknown
// operator key decodes (with Op set to the key) so that Validate reports it
// with every other problem; a node with zero or several keys, or with wrong
// JSON types, fails to decode.
type Filter struct {
	Op FilterOp
	// Field is the metadata field of eq, in, range, prefix and exists.
	Field string
	// Value is the operand of eq (scalar) and prefix (string).
	Value Value
	// Values are the operands of in (scalars, ≥ 1).
	Values []Value
	// GT, GTE, LT, LTE are the range bounds (nil = absent; ≥ 1 present; at
	// most one lower and one upper).
	GT, GTE, LT, LTE *float64
	// Children are the operands of and / or (≥ 1) and not (exactly 1).
	Children []Filter
}

// Constructors for building filters in Go.

func Eq(field string, v Value) Filter { return Filter{Op: OpEq, Field: field, Value: v} }
func In(field string, vs ...Value) Filter {
	return Filter{Op: OpIn, Field: field, Values: append([]Value{}, vs...)}
}
func Prefix(field, p string) Filter { return Filter{Op: OpPrefix, Field: field, Value: String(p)} }
func Exists(field string) Filter    { return Filter{Op: OpExists, Field: field} }
func And(fs ...Filter) Filter       { return Filter{Op: OpAnd, Children: append([]Filter{}, fs...)} }
func Or(fs ...Filter) Filter        { return Filter{Op: OpOr, Children: append([]Filter{}, fs...)} }
func Not(f Filter) Filter           { return Filter{Op: OpNot, Children: []Filter{f}} }

// Range builds a range filter; pass nil for an absent bound.
func Range(field string, gt, gte, lt, lte *float64) Filter {
	return Filter{Op: OpRange, Field: field, GT: gt, GTE: gte, LT: lt, LTE: lte}
}

// F returns a pointer to f, for range bounds.
func F(f float64) *float64 { return &f }

type fieldValue struct {
	Field string `json:"field"`
	Value *Value `json:"value"`
}

type fieldValues struct {
	Field  string  `json:"field"`
	Values []Value `json:"values"`
}

type rangeWire struct {
	Field string   `json:"field"`
	GT    *float64 `json:"gt,omitempty"`
	GTE   *float64 `json:"gte,omitempty"`
	LT    *float64 `json:"lt,omitempty"`
	LTE   *float64 `json:"lte,omitempty"`
}

// MarshalJSON encodes the one-key form shown on Filter.
func (f Filter) MarshalJSON() ([]byte, error) {
	var inner any
	switch f.Op {
	case OpEq, OpPrefix:
		v := f.Value
		inner = fieldValue{Field: f.Field, Value: &v}
	case OpIn:
		vs := f.Values
		if vs == nil {
			vs = []Value{}
		}
		inner = fieldValues{Field: f.Field, Values: vs}
	case OpRange:
		inner = rangeWire{Field: f.Field, GT: f.GT, GTE: f.GTE, LT: f.LT, LTE: f.LTE}
	case OpExists:
		inner = f.Field
	case OpAnd, OpOr:
		cs := f.Children
		if cs == nil {
			cs = []Filter{}
		}
		inner = cs
	case OpNot:
		if len(f.Children) == 1 {
			inner = f.Children[0]
		} else {
			inner = f.Children // invalid; Validate reports it
		}
	default:
		inner = struct{}{}
	}
	return json.Marshal(map[string]any{string(f.Op): inner})
}

// UnmarshalJSON decodes the one-key form shown on Filter (closed schema).
func (f *Filter) UnmarshalJSON(data []byte) error {
	n := 0
	g, err := parseFilter(data, nil, 1, &n)
	if err != nil {
		return err
	}
	*f = g
	return nil
}

func parseFilter(data []byte, loc []any, depth int, nodes *int) (Filter, error) {
	*nodes++
	if depth > MaxFilterDepth {
		return Filter{}, &decodeError{loc: loc, input: depth, typ: ErrTypeInvalidFilter, msg: "filter nested too deeply", domain: "depth ≤ 32"}
	}
	if *nodes > MaxFilterNodes {
		return Filter{}, &decodeError{loc: loc, input: *nodes, typ: ErrTypeInvalidFilter, msg: "filter has too many nodes", domain: "≤ 1024 nodes"}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return Filter{}, &decodeError{loc: loc, typ: ErrTypeJSONType, msg: "a filter must be a JSON object with exactly one operator key", domain: "{\"eq\"|\"in\"|\"range\"|\"prefix\"|\"exists\"|\"and\"|\"or\"|\"not\": …}"}
	}
	if len(m) != 1 {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		return Filter{}, &decodeError{loc: loc, input: keys, typ: ErrTypeInvalidFilter, msg: "a filter node must have exactly one operator key", domain: "one of eq, in, range, prefix, exists, and, or, not"}
	}
	var key string
	var raw json.RawMessage
	for k, v := range m {
		key, raw = k, v
	}
	op := FilterOp(key)
	l := at(loc, key)
	typeErr := func(domain string) error {
		return &decodeError{loc: l, typ: ErrTypeJSONType, msg: "wrong JSON shape for filter operator " + key, domain: domain}
	}
	out := Filter{Op: op}
	switch op {
	case OpEq, OpPrefix:
		var w fieldValue
		if err := strictUnmarshal(raw, &w); err != nil {
			return Filter{}, wrapNested(err, l, typeErr(`{"field":string,"value":scalar}`))
		}
		out.Field = w.Field
		if w.Value != nil {
			out.Value = *w.Value
		}
	case OpIn:
		var w fieldValues
		if err := strictUnmarshal(raw, &w); err != nil {
			return Filter{}, wrapNested(err, l, typeErr(`{"field":string,"values":[scalar,…]}`))
		}
		out.Field, out.Values = w.Field, w.Values
	case OpRange:
		var w rangeWire
		if err := strictUnmarshal(raw, &w); err != nil {
			return Filter{}, wrapNested(err, l, typeErr(`{"field":string,"gt"|"gte"|"lt"|"lte":number}`))
		}
		out.Field, out.GT, out.GTE, out.LT, out.LTE = w.Field, w.GT, w.GTE, w.LT, w.LTE
	case OpExists:
		if err := json.Unmarshal(raw, &out.Field); err != nil {
			return Filter{}, typeErr("string (the field name)")
		}
	case OpAnd, OpOr:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return Filter{}, typeErr("[filter,…]")
		}
		out.Children = make([]Filter, 0, len(items))
		for i, it := range items {
			c, err := parseFilter(it, at(l, i), depth+1, nodes)
			if err != nil {
				return Filter{}, err
			}
			out.Children = append(out.Children, c)
		}
	case OpNot:
		c, err := parseFilter(raw, l, depth+1, nodes)
		if err != nil {
			return Filter{}, err
		}
		out.Children = []Filter{c}
	default:
		// Unknown operator: keep the name so Validate reports it.
	}
	return out, nil
}

// wrapNested keeps a package decodeError (with its loc made absolute) or an
// unknown-field error, else returns fallback.
func wrapNested(err error, loc []any, fallback error) error {
	if de, ok := err.(*decodeError); ok {
		cp := *de
		cp.loc = at(loc, de.loc...)
		return &cp
	}
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		l := loc
		if te.Field != "" {
			for _, p := range strings.Split(te.Field, ".") {
				l = at(l, p)
			}
		}
		msg, domain := typeMismatch(te)
		return &decodeError{loc: l, input: te.Value, typ: ErrTypeJSONType, msg: msg, domain: domain}
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &decodeError{loc: at(loc, strings.Trim(f, `"`)), input: strings.Trim(f, `"`), typ: ErrTypeUnknownField, msg: "unknown field " + f, domain: "a field of the closed schema"}
	}
	return fallback
}

// validate appends every problem in f (at loc) to c.
func (f *Filter) validate(c *collector, loc []any, depth int, nodes *int) {
	*nodes++
	if depth > MaxFilterDepth {
		c.add(loc, depth, ErrTypeInvalidFilter, "filter nested too deeply", "depth ≤ 32")
		return
	}
	if *nodes > MaxFilterNodes {
		c.add(loc, *nodes, ErrTypeInvalidFilter, "filter has too many nodes", "≤ 1024 nodes")
		return
	}
	l := at(loc, string(f.Op))
	needField := func() {
		if f.Field == "" {
			c.add(at(l, "field"), "", ErrTypeMissing, "filter field name is required", "non-empty metadata field name")
		}
	}
	switch f.Op {
	case OpEq:
		needField()
		if !f.Value.IsScalar() {
			c.add(at(l, "value"), f.Value.jsonable(), ErrTypeInvalidFilter, "eq needs a scalar value", "string | number | bool")
		} else if n, ok := f.Value.Num(); ok && (math.IsNaN(n) || math.IsInf(n, 0)) {
			c.add(at(l, "value"), safeNumber(n), ErrTypeNotFinite, "eq value must be finite", "finite number")
		}
	case OpPrefix:
		needField()
		if _, ok := f.Value.Str(); !ok {
			c.add(at(l, "value"), f.Value.jsonable(), ErrTypeInvalidFilter, "prefix needs a string value", "string")
		}
	case OpIn:
		needField()
		if len(f.Values) == 0 {
			c.add(at(l, "values"), []any{}, ErrTypeInvalidFilter, "in needs at least one value", "non-empty list of scalars")
		}
		for i, v := range f.Values {
			if !v.IsScalar() {
				c.add(at(l, "values", i), v.jsonable(), ErrTypeInvalidFilter, "in values must be scalars", "string | number | bool")
			} else if n, ok := v.Num(); ok && (math.IsNaN(n) || math.IsInf(n, 0)) {
				c.add(at(l, "values", i), safeNumber(n), ErrTypeNotFinite, "in value must be finite", "finite number")
			}
		}
	case OpRange:
		needField()
		bounds := []struct {
			name string
			p    *float64
		}{{"gt", f.GT}, {"gte", f.GTE}, {"lt", f.LT}, {"lte", f.LTE}}
		any1 := false
		for _, b := range bounds {
			if b.p == nil {
				continue
			}
			any1 = true
			if math.IsNaN(*b.p) || math.IsInf(*b.p, 0) {
				c.add(at(l, b.name), safeNumber(*b.p), ErrTypeNotFinite, "range bound must be finite", "finite number")
			}
		}
		if !any1 {
			c.add(l, nil, ErrTypeInvalidFilter, "range needs at least one bound", "one or more of gt, gte, lt, lte")
		}
		if f.GT != nil && f.GTE != nil {
			c.add(at(l, "gte"), *f.GTE, ErrTypeInvalidFilter, "range has both gt and gte", "at most one lower bound")
		}
		if f.LT != nil && f.LTE != nil {
			c.add(at(l, "lte"), *f.LTE, ErrTypeInvalidFilter, "range has both lt and lte", "at most one upper bound")
		}
		lo, loIncl, hasLo := lowerBound(f)
		hi, hiIncl, hasHi := upperBound(f)
		if hasLo && hasHi && !math.IsNaN(lo) && !math.IsNaN(hi) {
			if lo > hi || (lo == hi && !(loIncl && hiIncl)) {
				c.add(l, []any{safeNumber(lo), safeNumber(hi)}, ErrTypeEmptyRange, "range is empty: lower bound exceeds upper bound", "lower bound ≤ upper bound (< when either is exclusive)")
			}
		}
	case OpExists:
		needField()
	case OpAnd, OpOr:
		if len(f.Children) == 0 {
			c.add(l, []any{}, ErrTypeInvalidFilter, string(f.Op)+" needs at least one operand", "non-empty list of filters")
		}
		for i := range f.Children {
			f.Children[i].validate(c, at(l, i), depth+1, nodes)
		}
	case OpNot:
		if len(f.Children) != 1 {
			c.add(l, len(f.Children), ErrTypeInvalidFilter, "not needs exactly one operand", "one filter")
		}
		if len(f.Children) > 0 {
			f.Children[0].validate(c, l, depth+1, nodes)
		}
	default:
		c.add(loc, string(f.Op), ErrTypeUnknownFilterOp, "unknown filter operator "+strconvQuote(string(f.Op)), "eq | in | range | prefix | exists | and | or | not")
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func lowerBound(f *Filter) (v float64, incl, ok bool) {
	if f.GTE != nil {
		return *f.GTE, true, true
	}
	if f.GT != nil {
		return *f.GT, false, true
	}
	return 0, false, false
}

func upperBound(f *Filter) (v float64, incl, ok bool) {
	if f.LTE != nil {
		return *f.LTE, true, true
	}
	if f.LT != nil {
		return *f.LT, false, true
	}
	return 0, false, false
}

// Validate reports every problem in the filter tree as a *ValidationError
// with locs rooted at ["filter"].
func (f *Filter) Validate() error {
	var c collector
	n := 0
	f.validate(&c, []any{"filter"}, 1, &n)
	return c.err()
}

// Match evaluates the filter against a document's metadata. It is the
// reference semantics the indexed filter paths must agree with:
//   - eq: a scalar field equal to Value (same type), or a list field
//     containing the string Value;
//   - in: eq for some element of Values;
//   - range: a number field within every present bound;
//   - prefix: a string field (or some element of a list field) starting with Value;
//   - exists: the field is present;
//   - and / or / not: the boolean combinations (an empty and is true, an
//     empty or false; Validate rejects both).
//
// A missing field makes every leaf but exists false. An unknown operator is false.
func (f *Filter) Match(meta map[string]Value) bool {
	return f.MatchFunc(func(k string) (Value, bool) { v, ok := meta[k]; return v, ok })
}

// MatchFunc is Match over metadata read through get, which returns a
// field's value and whether the field is present. It lets a caller keep
// metadata in its stored form and decode only the fields the filter
// names.
func (f *Filter) MatchFunc(get func(field string) (Value, bool)) bool {
	switch f.Op {
	case OpEq:
		return matchEq(get, f.Field, f.Value)
	case OpIn:
		got, present := get(f.Field)
		if !present {
			return false
		}
		for _, v := range f.Values {
			if matchEqValue(got, v) {
				return true
			}
		}
		return false
	case OpRange:
		got, _ := get(f.Field)
		n, ok := got.Num()
		if !ok {
			return false
		}
		return (f.GT == nil || n > *f.GT) && (f.GTE == nil || n >= *f.GTE) &&
			(f.LT == nil || n < *f.LT) && (f.LTE == nil || n <= *f.LTE)
	case OpPrefix:
		p, ok := f.Value.Str()
		if !ok {
			return false
		}
		got, _ := get(f.Field)
		if s, ok := got.Str(); ok {
			return strings.HasPrefix(s, p)
		}
		if l, ok := got.List(); ok {
			for _, s := range l {
				if strings.HasPrefix(s, p) {
					return true
				}
			}
		}
		return false
	case OpExists:
		_, ok := get(f.Field)
		return ok
	case OpAnd:
		for i := range f.Children {
			if !f.Children[i].MatchFunc(get) {
				return false
			}
		}
		return true
	case OpOr:
		for i := range f.Children {
			if f.Children[i].MatchFunc(get) {
				return true
			}
		}
		return false
	case OpNot:
		if len(f.Children) != 1 {
			return false
		}
		return !f.Children[0].MatchFunc(get)
	}
	return false
}

func matchEq(get func(string) (Value, bool), field string, want Value) bool {
	got, present := get(field)
	return present && matchEqValue(got, want)
}

// matchEqValue is eq against a present field's value.
func matchEqValue(got, want Value) bool {
	if l, ok := got.List(); ok {
		if s, ok := want.Str(); ok {
			for _, x := range l {
				if x == s {
					return true
				}
			}
		}
		return false
	}
	return want.IsScalar() && got.Equal(want)
}
