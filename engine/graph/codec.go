package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/stratasearch/strata/internal/base"
)

// ErrCorrupt is matched by every decoding error (base.ErrCorrupt).
var ErrCorrupt = base.ErrCorrupt

// File format, version 1. Integers are unsigned LEB128 varints (uv)
// unless said otherwise; zz is a zigzag varint; strings are indices (uv)
// into the string table.
//
//	offset 0  magic "STRGRAF\x00" | version u32 LE
//	12        strings  count uv, then per string, sorted, front-coded:
//	                   shared-prefix-length uv | suffix-length uv | suffix bytes
//	          nodes    count uv, then per node:
//	                   kind u8 | key | name | file | docID | sig |
//	                   line uv | endLine−line uv
//	          edges    per node, in node order: out-degree uv, then per
//	                   out-edge sorted by (To, Kind):
//	                   To − previous To uv (the first: To) | kind u8 |
//	                   line − node's line zz | count−1 uv
//	trailer   crc32c u32 LE of every byte before it | "GRFE"
//
// The in-edges are rebuilt on load. A string shared by many nodes (a
// file path) is stored once; sorted front coding stores the path part of
// "pkg.Type.Method" keys and ABS_PATH#Lx-Ly doc ids once per run of
// neighbours. Readers accept versions ≤ formatVersion and refuse newer
// ones.
const (
	magic         = "STRGRAF\x00"
	endMagic      = "GRFE"
	formatVersion = 1
	headerSize    = len(magic) + 4
	trailerSize   = 8
	corruptKind   = "graph"
	// maxExpansion bounds the string table's decoded size relative to the
	// input (real graphs expand 2–5×).
	maxExpansion = 64
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode writes g in the file format above to w and returns the bytes
// written.
func Encode(w io.Writer, g *Graph) (int64, error) {
	b := AppendEncoded(nil, g)
	n, err := w.Write(b)
	return int64(n), err
}

// AppendEncoded appends g's encoding to dst.
func AppendEncoded(dst []byte, g *Graph) []byte {
	// String table.
	set := map[string]struct{}{"": {}}
	for i := range g.nodes {
		n := &g.nodes[i]
		for _, s := range [...]string{n.Key, n.Name, n.File, n.DocID, n.Sig} {
			set[s] = struct{}{}
		}
	}
	strs := make([]string, 0, len(set))
	for s := range set {
		strs = append(strs, s)
	}
	sort.Strings(strs)
	idx := make(map[string]uint64, len(strs))
	for i, s := range strs {
		idx[s] = uint64(i)
	}
	b := append(dst, magic...)
	b = binary.LittleEndian.AppendUint32(b, formatVersion)
	start := len(b)
	b = binary.AppendUvarint(b, uint64(len(strs)))
	prev := ""
	for _, s := range strs {
		p := commonPrefix(prev, s)
		b = binary.AppendUvarint(b, uint64(p))
		b = binary.AppendUvarint(b, uint64(len(s)-p))
		b = append(b, s[p:]...)
		prev = s
	}
	b = binary.AppendUvarint(b, uint64(len(g.nodes)))
	for i := range g.nodes {
		n := &g.nodes[i]
		b = append(b, byte(n.Kind))
		for _, s := range [...]string{n.Key, n.Name, n.File, n.DocID, n.Sig} {
			b = binary.AppendUvarint(b, idx[s])
		}
		b = binary.AppendUvarint(b, uint64(n.Line))
		b = binary.AppendUvarint(b, uint64(max(n.EndLine-n.Line, 0)))
	}
	for i := range g.nodes {
		out := g.Out(NodeID(i))
		b = binary.AppendUvarint(b, uint64(len(out)))
		prevTo := NodeID(0)
		for _, e := range out {
			b = binary.AppendUvarint(b, uint64(e.To-prevTo))
			prevTo = e.To
			b = append(b, byte(e.Kind))
			b = binary.AppendVarint(b, int64(e.Line)-int64(g.nodes[i].Line))
			b = binary.AppendUvarint(b, uint64(max(e.Count, 1)-1))
		}
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
	return append(b, endMagic...)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// WriteFile writes g to path atomically (a temporary file in the same
// directory, fsynced, then renamed) and returns the bytes written.
func WriteFile(path string, g *Graph) (int64, error) {
	b := AppendEncoded(nil, g)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return 0, err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return 0, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return 0, err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return 0, err
	}
	return int64(len(b)), nil
}

// ReadFile decodes the graph file at path. Errors: the file's, or a
// *base.CorruptError naming path and the byte offset.
func ReadFile(path string) (*Graph, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(b, path)
}

// Decode decodes an encoded graph. path names the input in errors ("" for
// a buffer). Every malformed input — truncation, a bad magic or
// checksum, an out-of-range index or kind, a newer version — is a
// *base.CorruptError with the byte offset of the problem; Decode never
// panics.
func Decode(b []byte, path string) (*Graph, error) {
	if len(b) < headerSize+trailerSize {
		return nil, base.Corruptf(corruptKind, path, int64(len(b)), "file of %d bytes is shorter than header and trailer (%d)", len(b), headerSize+trailerSize)
	}
	if string(b[:len(magic)]) != magic {
		return nil, base.Corruptf(corruptKind, path, 0, "bad magic %q", b[:len(magic)])
	}
	if v := binary.LittleEndian.Uint32(b[len(magic):]); v == 0 || v > formatVersion {
		return nil, base.Corruptf(corruptKind, path, int64(len(magic)), "format version %d (this build reads 1..%d)", v, formatVersion)
	}
	t := len(b) - trailerSize
	if string(b[t+4:]) != endMagic {
		return nil, base.Corruptf(corruptKind, path, int64(t+4), "bad end magic %q", b[t+4:])
	}
	if want, got := binary.LittleEndian.Uint32(b[t:]), crc32.Checksum(b[headerSize:t], castagnoli); want != got {
		return nil, base.Corruptf(corruptKind, path, int64(t), "checksum %08x, computed %08x", want, got)
	}
	return decodeBody(b[:t], headerSize, path)
}

type decoder struct {
	b    []byte
	pos  int
	path string
	err  error
}

func (d *decoder) fail(off int, format string, args ...any) {
	if d.err == nil {
		d.err = base.Corruptf(corruptKind, d.path, int64(off), format, args...)
	}
}

func (d *decoder) uv(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		d.fail(d.pos, "bad varint (%s)", what)
		return 0
	}
	d.pos += n
	return v
}

func (d *decoder) zz(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.pos:])
	if n <= 0 {
		d.fail(d.pos, "bad varint (%s)", what)
		return 0
	}
	d.pos += n
	return v
}

func (d *decoder) byte1(what string) byte {
	if d.err != nil {
		return 0
	}
	if d.pos >= len(d.b) {
		d.fail(d.pos, "truncated (%s)", what)
		return 0
	}
	c := d.b[d.pos]
	d.pos++
	return c
}

// count reads a count of items each at least minBytes long, refusing one
// the rest of the input cannot hold (so a corrupt count allocates
// nothing).
func (d *decoder) count(what string, minBytes int) int {
	at := d.pos
	v := d.uv(what)
	if d.err == nil && v > uint64(len(d.b)-d.pos)/uint64(minBytes) {
		d.fail(at, "%s count %d exceeds the %d bytes left", what, v, len(d.b)-d.pos)
		return 0
	}
	return int(v)
}

// decodeBody parses the sections of b from pos (b ends before the trailer).
func decodeBody(b []byte, pos int, path string) (*Graph, error) {
	d := &decoder{b: b, pos: pos, path: path}
	ns := d.count("strings", 2)
	strs := make([]string, 0, ns)
	prev := ""
	var sb strings.Builder
	// Front coding expands: a string may repeat all of its predecessor.
	// Bound the decoded bytes so a small corrupt file cannot allocate
	// quadratically many.
	total, limit := 0, maxExpansion*len(b)+1<<20
	for i := 0; i < ns && d.err == nil; i++ {
		at := d.pos
		p := d.uv("prefix length")
		l := d.uv("suffix length")
		if d.err != nil {
			break
		}
		if p > uint64(len(prev)) {
			d.fail(at, "string %d shares %d bytes with a string of %d", i, p, len(prev))
			break
		}
		if l > uint64(len(d.b)-d.pos) {
			d.fail(at, "string %d suffix of %d bytes exceeds the %d left", i, l, len(d.b)-d.pos)
			break
		}
		if total += int(p) + int(l); total > limit {
			d.fail(at, "string table expands past %d bytes (%d× the input)", limit, maxExpansion)
			break
		}
		sb.Reset()
		sb.WriteString(prev[:p])
		sb.Write(d.b[d.pos : d.pos+int(l)])
		d.pos += int(l)
		s := sb.String()
		if i > 0 && s <= prev {
			d.fail(at, "string %d is not above its predecessor", i)
			break
		}
		strs = append(strs, s)
		prev = s
	}
	str := func(what string) string {
		at := d.pos
		v := d.uv(what)
		if d.err == nil && v >= uint64(len(strs)) {
			d.fail(at, "%s string index %d out of range (%d strings)", what, v, len(strs))
		}
		if d.err != nil {
			return ""
		}
		return strs[v]
	}
	nn := d.count("nodes", 8)
	nodes := make([]Node, nn)
	keys := make(map[string]bool, nn)
	for i := 0; i < nn && d.err == nil; i++ {
		at := d.pos
		n := &nodes[i]
		n.Kind = NodeKind(d.byte1("node kind"))
		if d.err == nil && (n.Kind < File || n.Kind > maxNodeKind) {
			d.fail(at, "node %d: kind %d", i, n.Kind)
		}
		n.Key, n.Name, n.File, n.DocID, n.Sig = str("key"), str("name"), str("file"), str("doc id"), str("sig")
		line, span := d.uv("line"), d.uv("span")
		if d.err == nil && (line > 1<<31 || span > 1<<31) {
			d.fail(at, "node %d: line %d + %d out of range", i, line, span)
		}
		n.Line, n.EndLine = int(line), int(line+span)
		if d.err == nil && keys[n.Key] {
			d.fail(at, "node %d: duplicate key %q", i, n.Key)
		}
		keys[n.Key] = true
	}
	var edges []Edge
	for i := 0; i < nn && d.err == nil; i++ {
		deg := d.count("edges", 4)
		to := uint64(0)
		for j := 0; j < deg && d.err == nil; j++ {
			at := d.pos
			delta := d.uv("edge target")
			to += delta
			k := EdgeKind(d.byte1("edge kind"))
			dl := d.zz("edge line")
			c := d.uv("edge count")
			if d.err != nil {
				break
			}
			switch line := int64(nodes[i].Line) + dl; {
			case to >= uint64(nn):
				d.fail(at, "node %d: edge target %d out of range (%d nodes)", i, to, nn)
			case k < Contains || k > maxEdgeKind:
				d.fail(at, "node %d: edge kind %d", i, k)
			case j > 0 && delta == 0 && k <= edges[len(edges)-1].Kind:
				d.fail(at, "node %d: edges not sorted by (target, kind)", i)
			case line < 0 || line > 1<<31 || c >= 1<<32-1:
				d.fail(at, "node %d: edge line %d or count %d out of range", i, line, c+1)
			default:
				edges = append(edges, Edge{From: NodeID(i), To: NodeID(to), Kind: k, Line: uint32(line), Count: uint32(c + 1)})
			}
		}
	}
	if d.err == nil && d.pos != len(d.b) {
		d.fail(d.pos, "%d bytes after the last section", len(d.b)-d.pos)
	}
	if d.err != nil {
		return nil, d.err
	}
	return newGraph(nodes, edges), nil
}

// IsCorrupt reports whether err is a decoding error (errors.Is ErrCorrupt).
func IsCorrupt(err error) bool { return errors.Is(err, ErrCorrupt) }

// Stats summarises a graph: node and edge counts by kind.
type Stats struct {
	Nodes, Edges int
	NodesByKind  map[string]int
	EdgesByKind  map[string]int
}

// Stats counts g's nodes and edges by kind.
func (g *Graph) Stats() Stats {
	s := Stats{Nodes: len(g.nodes), Edges: len(g.out), NodesByKind: map[string]int{}, EdgesByKind: map[string]int{}}
	for i := range g.nodes {
		s.NodesByKind[g.nodes[i].Kind.String()]++
	}
	for _, e := range g.out {
		s.EdgesByKind[e.Kind.String()]++
	}
	return s
}

func (s Stats) String() string {
	return fmt.Sprintf("%d nodes %v, %d edges %v", s.Nodes, s.NodesByKind, s.Edges, s.EdgesByKind)
}

func crcOf(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
