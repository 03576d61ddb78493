package contract

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// AppendJSON appends r's JSON form to dst: the bytes encoding/json writes
// for r with HTML escaping off (json.Encoder.SetEscapeHTML(false)), without
// the reflection walk. With epoch false the "epoch" member is left out (the
// server's form for a caller that may not see the collection's epoch).
//
// It fails only where encoding/json fails: a score or explain figure that
// is NaN or ±Inf, a timestamp outside RFC 3339 (years 0–9999), an invalid
// (zero) metadata Value. dst is then returned unchanged with the error.
func (r *Result) AppendJSON(dst []byte, epoch bool) ([]byte, error) {
	orig := dst
	dst = append(dst, `{"hits":`...)
	if r.Hits == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range r.Hits {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = r.Hits[i].appendJSON(dst); err != nil {
				return orig, err
			}
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"partial":`...)
	dst = strconv.AppendBool(dst, r.Partial)
	if r.Reason != "" {
		dst = append(dst, `,"reason":`...)
		dst = appendJSONString(dst, r.Reason)
	}
	if epoch {
		dst = append(dst, `,"epoch":`...)
		dst = strconv.AppendUint(dst, r.Epoch, 10)
	}
	if len(r.Dropped) > 0 {
		dst = append(dst, `,"dropped":[`...)
		for i, d := range r.Dropped {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"doc_id":`...)
			dst = appendJSONString(dst, d.DocID)
			dst = append(dst, `,"reason":`...)
			dst = appendJSONString(dst, string(d.Reason))
			if d.Detail != "" {
				dst = append(dst, `,"detail":`...)
				dst = appendJSONString(dst, d.Detail)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if r.NextCursor != "" {
		dst = append(dst, `,"next_cursor":`...)
		dst = appendJSONString(dst, r.NextCursor)
	}
	return append(dst, '}'), nil
}

func (e *Envelope) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"doc_id":`...)
	dst = appendJSONString(dst, e.DocID)
	dst = append(dst, `,"content":`...)
	dst = appendJSONString(dst, e.Content)
	if e.SourceURI != "" {
		dst = append(dst, `,"source_uri":`...)
		dst = appendJSONString(dst, e.SourceURI)
	}
	dst = append(dst, `,"version_hash":`...)
	dst = appendJSONString(dst, e.VersionHash)
	if !e.Timestamp.IsZero() {
		dst = append(dst, `,"timestamp":`...)
		var err error
		if dst, err = appendJSONTime(dst, e.Timestamp); err != nil {
			return dst, err
		}
	}
	var err error
	dst = append(dst, `,"score":`...)
	if dst, err = appendJSONFloat(dst, e.Score); err != nil {
		return dst, err
	}
	dst = append(dst, `,"trust":`...)
	dst = appendJSONString(dst, string(e.Trust))
	if e.Namespace != "" {
		dst = append(dst, `,"namespace":`...)
		dst = appendJSONString(dst, e.Namespace)
	}
	if len(e.Metadata) > 0 {
		dst = append(dst, `,"metadata":{`...)
		var small [16]string
		keys := small[:0]
		for k := range e.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ':')
			if dst, err = e.Metadata[k].AppendJSON(dst); err != nil {
				return dst, err
			}
		}
		dst = append(dst, '}')
	}
	if e.Reread {
		dst = append(dst, `,"reread":true`...)
	}
	dst = append(dst, `,"explain":`...)
	if dst, err = e.Explain.appendJSON(dst); err != nil {
		return dst, err
	}
	if len(e.Highlights) > 0 {
		dst = append(dst, `,"highlights":[`...)
		for i, s := range e.Highlights {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = strconv.AppendInt(dst, int64(s.Start), 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, int64(s.End), 10)
			dst = append(dst, ']')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

func (x *Explain) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	sep := func() {
		if dst[len(dst)-1] != '{' {
			dst = append(dst, ',')
		}
	}
	if x.LexicalRank != 0 {
		sep()
		dst = append(dst, `"lexical_rank":`...)
		dst = strconv.AppendInt(dst, int64(x.LexicalRank), 10)
	}
	if x.DenseRank != 0 {
		sep()
		dst = append(dst, `"dense_rank":`...)
		dst = strconv.AppendInt(dst, int64(x.DenseRank), 10)
	}
	for _, f := range [...]struct {
		name string
		v    float64
	}{{`"lexical_score":`, x.LexicalScore}, {`"dense_score":`, x.DenseScore}, {`"fused_score":`, x.FusedScore}, {`"prior":`, x.Prior}} {
		if f.v == 0 {
			continue
		}
		sep()
		dst = append(dst, f.name...)
		var err error
		if dst, err = appendJSONFloat(dst, f.v); err != nil {
			return dst, err
		}
	}
	if x.Expansion != "" {
		sep()
		dst = append(dst, `"expansion":`...)
		dst = appendJSONString(dst, x.Expansion)
	}
	return append(dst, '}'), nil
}

// appendJSONFloat appends f as encoding/json writes a float64: plain
// decimal with the fewest digits that parse back to f, except exponent
// form below 1e-6 and from 1e21 (two-digit negative exponents shortened,
// "e-07" → "e-7").
func appendJSONFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, fmt.Errorf("contract: score %v is not finite", f)
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// appendJSONTime appends t quoted in RFC 3339 with sub-second precision,
// as time.Time.MarshalJSON writes it.
func appendJSONTime(dst []byte, t time.Time) ([]byte, error) {
	out, err := t.AppendText(append(dst, '"'))
	if err != nil {
		return dst, err
	}
	return append(out, '"'), nil
}
