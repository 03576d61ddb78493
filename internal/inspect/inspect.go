// Package inspect is the common report of Strata's file inspectors: the
// header fields, sections, checksums, records and problems of one file, as
// printed by `searchd inspect` (DESIGN.md "File formats").
//
// Each format package owns its parser (engine/hnsw, engine/bm25,
// engine/ivfpq, engine/tier, engine/tier/wal export Inspect functions that
// fill an *Info); this package only holds the types and the renderers, so
// it imports nothing of Strata and every format package may import it.
//
// An inspector reads only what the format's header, footer and section
// table say (no index is built) and recomputes every CRC32C the format
// defines. It does not stop at the first problem: each one is recorded in
// Info.Problems with its byte offset, and an inspector returns an error only
// when the bytes cannot be identified as its format at all.
//
// Offsets are absolute byte offsets in the inspected file. A file embedded
// in another one (an HNSW or BM25 section of a warm segment) is a child
// Info whose offsets have been shifted by Shift to the parent's
// coordinates; Info.Offset says where it starts.
package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Info describes one inspected file (or an embedded file inside one).
type Info struct {
	// Path names the file ("" for bytes without a name).
	Path string `json:"path,omitempty"`
	// Format is the format's short name, e.g. "STRHNSW" or "wal".
	Format string `json:"format"`
	// Version is the format version read from the file (0 if unknown).
	Version int `json:"version"`
	// Offset is where this file starts inside its parent (0 at top level).
	Offset int64 `json:"offset,omitempty"`
	// Size is the file's length in bytes.
	Size int64 `json:"size"`
	// Header lists decoded header and footer fields in file order.
	Header []Field `json:"header,omitempty"`
	// Sections lists the file's sections as its section table states them.
	Sections []Section `json:"sections,omitempty"`
	// Checksums lists every CRC32C recomputed (record logs list only the
	// failing records' checksums; Header counts the intact ones).
	Checksums []Checksum `json:"checksums,omitempty"`
	// Records lists decoded log records (manifest edits); nil elsewhere.
	Records []Record `json:"records,omitempty"`
	// Children are embedded files (a warm segment's HNSW and BM25
	// sections), offsets in this file's coordinates.
	Children []*Info `json:"children,omitempty"`
	// Problems lists everything wrong, in the order found.
	Problems []Problem `json:"problems,omitempty"`
	// Warnings lists conditions that recovery handles without losing
	// acknowledged data (a record log's torn tail); they do not make the
	// file fail.
	Warnings []Problem `json:"warnings,omitempty"`
}

// Field is one decoded header or footer value.
type Field struct {
	Name string `json:"name"`
	// Value is a number, string or bool.
	Value any `json:"value"`
	// Offset is the field's byte offset, or -1 for derived values.
	Offset int64 `json:"offset"`
}

// Section is one region of a file as its section table states it.
type Section struct {
	Name   string `json:"name"`
	Offset int64  `json:"offset"`
	Length int64  `json:"length"`
	// CRC is the section's own stored CRC32C when the format has one.
	CRC *uint32 `json:"crc32c,omitempty"`
}

// Checksum is one recomputed CRC32C (Castagnoli).
type Checksum struct {
	Name string `json:"name"`
	// Offset is where the stored checksum lives in the file.
	Offset int64 `json:"offset"`
	// Start and End delimit the covered bytes [Start, End).
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	Stored   uint32 `json:"stored"`
	Computed uint32 `json:"computed"`
	OK       bool   `json:"ok"`
}

// Record is one record of a record log.
type Record struct {
	Offset int64  `json:"offset"`
	Length int64  `json:"length"` // header + payload bytes
	Seq    uint64 `json:"seq"`
	Type   string `json:"type"`
	// Summary is a one-line decoding of the payload.
	Summary string `json:"summary"`
}

// Problem is one thing wrong with a file at a byte offset (-1: the file as
// a whole).
type Problem struct {
	Offset int64  `json:"offset"`
	Reason string `json:"reason"`
}

func (p Problem) String() string {
	if p.Offset < 0 {
		return p.Reason
	}
	return fmt.Sprintf("at byte %d: %s", p.Offset, p.Reason)
}

// Add records a field; offset -1 marks a derived value.
func (in *Info) Add(name string, value any, offset int64) {
	in.Header = append(in.Header, Field{Name: name, Value: value, Offset: offset})
}

// Problemf records a problem at offset.
func (in *Info) Problemf(offset int64, format string, args ...any) {
	in.Problems = append(in.Problems, Problem{Offset: offset, Reason: fmt.Sprintf(format, args...)})
}

// Warnf records a warning at offset.
func (in *Info) Warnf(offset int64, format string, args ...any) {
	in.Warnings = append(in.Warnings, Problem{Offset: offset, Reason: fmt.Sprintf(format, args...)})
}

// AddSection records a section; crc is its stored CRC32C or nil.
func (in *Info) AddSection(name string, offset, length int64, crc *uint32) {
	in.Sections = append(in.Sections, Section{Name: name, Offset: offset, Length: length, CRC: crc})
}

// Check records a recomputed checksum over [start, end) whose stored value
// lives at offset, adds a problem when it differs, and reports whether it
// matched. The problem's offset is start (the damaged section), or offset
// for a checksum covering the file from byte 0, where start says nothing.
func (in *Info) Check(name string, offset, start, end int64, stored, computed uint32) bool {
	ok := stored == computed
	in.Checksums = append(in.Checksums, Checksum{Name: name, Offset: offset, Start: start, End: end,
		Stored: stored, Computed: computed, OK: ok})
	if !ok {
		at := start
		if start == 0 {
			at = offset
		}
		in.Problemf(at, "%s CRC32C mismatch over [%d, %d): stored %08x, computed %08x", name, start, end, stored, computed)
	}
	return ok
}

// Field returns the value of the first header field called name.
func (in *Info) Field(name string) (any, bool) {
	for _, f := range in.Header {
		if f.Name == name {
			return f.Value, true
		}
	}
	return nil, false
}

// OK reports whether the file and all its children have no problems and
// every checksum matched.
func (in *Info) OK() bool {
	if len(in.Problems) > 0 {
		return false
	}
	for _, c := range in.Checksums {
		if !c.OK {
			return false
		}
	}
	for _, c := range in.Children {
		if !c.OK() {
			return false
		}
	}
	return true
}

// ChecksumsOK reports whether every checksum of the file and its children
// matched.
func (in *Info) ChecksumsOK() bool {
	for _, c := range in.Checksums {
		if !c.OK {
			return false
		}
	}
	for _, c := range in.Children {
		if !c.ChecksumsOK() {
			return false
		}
	}
	return true
}

// Shift moves every offset of in (and its children) by base: an Info
// computed over a section's bytes becomes one in the enclosing file's
// coordinates.
func (in *Info) Shift(base int64) {
	in.Offset += base
	for i := range in.Header {
		if in.Header[i].Offset >= 0 {
			in.Header[i].Offset += base
		}
	}
	for i := range in.Sections {
		in.Sections[i].Offset += base
	}
	for i := range in.Checksums {
		c := &in.Checksums[i]
		c.Offset += base
		c.Start += base
		c.End += base
	}
	for i := range in.Records {
		in.Records[i].Offset += base
	}
	for _, ps := range [][]Problem{in.Problems, in.Warnings} {
		for i := range ps {
			if ps[i].Offset >= 0 {
				ps[i].Offset += base
			}
		}
	}
	for _, c := range in.Children {
		c.Shift(base)
	}
}

// WriteJSON writes infos as an indented JSON array.
func WriteJSON(w io.Writer, infos []*Info) error {
	if infos == nil {
		infos = []*Info{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(infos)
}

// WriteText writes in as aligned, human-readable tables: header fields,
// sections, checksums, records, problems, then the children indented.
func WriteText(w io.Writer, in *Info) error {
	var sb strings.Builder
	writeText(&sb, in, "")
	lines := strings.Split(sb.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func writeText(sb *strings.Builder, in *Info, ind string) {
	name := in.Path
	if name == "" {
		name = "<bytes>"
	}
	status := "OK"
	if !in.OK() {
		status = "PROBLEMS"
	}
	fmt.Fprintf(sb, "%s%s: %s", ind, name, in.Format)
	if in.Version != 0 {
		fmt.Fprintf(sb, " version %d", in.Version)
	}
	fmt.Fprintf(sb, ", %d bytes", in.Size)
	if in.Offset != 0 {
		fmt.Fprintf(sb, " at offset %d", in.Offset)
	}
	fmt.Fprintf(sb, "  [%s]\n", status)
	table := func(title string, head []string, rows [][]string) {
		if len(rows) == 0 {
			return
		}
		fmt.Fprintf(sb, "%s  %s\n", ind, title)
		tw := tabwriter.NewWriter(sb, 0, 0, 2, ' ', 0)
		if head != nil {
			fmt.Fprintf(tw, "%s    %s\n", ind, strings.Join(head, "\t"))
		}
		for _, r := range rows {
			fmt.Fprintf(tw, "%s    %s\n", ind, strings.Join(r, "\t"))
		}
		tw.Flush()
	}
	var rows [][]string
	for _, f := range in.Header {
		off := ""
		if f.Offset >= 0 {
			off = fmt.Sprintf("@%d", f.Offset)
		}
		rows = append(rows, []string{f.Name, fmtValue(f.Value), off})
	}
	table("header", nil, rows)
	rows = nil
	for _, s := range in.Sections {
		crc := "-"
		if s.CRC != nil {
			crc = fmt.Sprintf("%08x", *s.CRC)
		}
		rows = append(rows, []string{s.Name, fmt.Sprint(s.Offset), fmt.Sprint(s.Length), crc})
	}
	table("sections", []string{"NAME", "OFFSET", "LENGTH", "CRC32C"}, rows)
	rows = nil
	for _, c := range in.Checksums {
		st := "ok"
		if !c.OK {
			st = "MISMATCH"
		}
		rows = append(rows, []string{c.Name, fmt.Sprint(c.Offset), fmt.Sprintf("[%d, %d)", c.Start, c.End),
			fmt.Sprintf("%08x", c.Stored), fmt.Sprintf("%08x", c.Computed), st})
	}
	table("checksums", []string{"NAME", "AT", "COVERS", "STORED", "COMPUTED", ""}, rows)
	rows = nil
	for _, r := range in.Records {
		rows = append(rows, []string{fmt.Sprint(r.Offset), fmt.Sprint(r.Length), fmt.Sprint(r.Seq), r.Type, r.Summary})
	}
	table("records", []string{"OFFSET", "LENGTH", "SEQ", "TYPE", "SUMMARY"}, rows)
	if len(in.Problems) > 0 {
		fmt.Fprintf(sb, "%s  problems\n", ind)
		for _, p := range in.Problems {
			fmt.Fprintf(sb, "%s    %s\n", ind, p)
		}
	}
	if len(in.Warnings) > 0 {
		fmt.Fprintf(sb, "%s  warnings\n", ind)
		for _, p := range in.Warnings {
			fmt.Fprintf(sb, "%s    %s\n", ind, p)
		}
	}
	for _, c := range in.Children {
		writeText(sb, c, ind+"    ")
	}
}

func fmtValue(v any) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(v)
}

// U32 returns the little-endian uint32 at b[off:], or 0 and false when the
// four bytes are not all inside b.
func U32(b []byte, off int64) (uint32, bool) {
	if off < 0 || off > int64(len(b))-4 {
		return 0, false
	}
	p := b[off:]
	return uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24, true
}

// U64 returns the little-endian uint64 at b[off:], or 0 and false when the
// eight bytes are not all inside b.
func U64(b []byte, off int64) (uint64, bool) {
	lo, ok1 := U32(b, off)
	hi, ok2 := U32(b, off+4)
	return uint64(lo) | uint64(hi)<<32, ok1 && ok2
}

// Within reports whether [off, off+n) lies inside [lo, hi), without
// overflow.
func Within(off, n uint64, lo, hi int64) bool {
	return lo >= 0 && hi >= lo && off >= uint64(lo) && off <= uint64(hi) && n <= uint64(hi)-off
}
