package contract

import (
	"bytes"
	"strconv"
)

// vectorWire is the JSON form of a vector field ("vector" of a query or a
// document): an array of numbers, decoded into a slice allocated once at
// its final length (encoding/json grows it in 1.25× steps, copying a
// 65,536-d vector several times), each element parsed as encoding/json
// parses a float32. null elements, non-numbers and numbers beyond float32
// are refused (a null element at loc ["vector", i], others at ["vector"]
// with the index in the message, as encoding/json reported them); a null
// vector is absent. A vector decoded into a non-nil vectorWire reuses its
// backing array when it is large enough.
type vectorWire []float32

func (v *vectorWire) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		*v = nil
		return nil
	}
	bad := func(i int, input any, typ, msg string) error {
		loc := []any{"vector"}
		if input == nil {
			loc = append(loc, i) // a null element: where it is
		}
		return &decodeError{loc: loc, input: input, typ: typ, msg: "element " + strconv.Itoa(i) + ": " + msg, domain: "a finite float32"}
	}
	if len(data) < 2 || data[0] != '[' || data[len(data)-1] != ']' {
		return &decodeError{loc: []any{"vector"}, typ: ErrTypeJSONType, msg: "vector must be an array of numbers", domain: "[number, …]"}
	}
	body := data[1 : len(data)-1]
	if len(bytes.TrimSpace(body)) == 0 {
		*v = vectorWire{}
		return nil
	}
	n := bytes.Count(body, []byte{','}) + 1
	out := (*v)[:0]
	if cap(out) < n {
		out = make(vectorWire, 0, n)
	}
	for i := 0; len(body) > 0; i++ {
		elem := body
		if j := bytes.IndexByte(body, ','); j >= 0 {
			elem, body = body[:j], body[j+1:]
		} else {
			body = nil
		}
		elem = bytes.TrimSpace(elem)
		switch {
		case len(elem) == 0:
			return bad(i, "", ErrTypeJSONInvalid, "empty vector element")
		case string(elem) == "null":
			return bad(i, nil, ErrTypeJSONType, "null where a number is due")
		case elem[0] != '-' && (elem[0] < '0' || elem[0] > '9'):
			return bad(i, clipBytes(elem), ErrTypeJSONType, "vector element is not a number")
		}
		f, err := strconv.ParseFloat(string(elem), 32)
		if err != nil {
			return bad(i, clipBytes(elem), ErrTypeJSONType, "vector element is not a float32: "+err.Error())
		}
		out = append(out, float32(f))
	}
	*v = out
	return nil
}

// clipBytes is an element echoed in an error, at most 64 bytes.
func clipBytes(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}
