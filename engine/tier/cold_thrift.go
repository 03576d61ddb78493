package tier

import (
	"encoding/binary"
	"fmt"
)

// checkParquetFooter walks the Thrift compact-protocol FileMetaData at the
// end of a Parquet file and checks that every list, set, map and binary
// length fits in the bytes that remain, before parquet-go decodes it:
// parquet-go's Thrift decoder allocates a list of the declared length up
// front, so a corrupt length would otherwise exhaust memory (a fatal
// error, not a recoverable panic). It returns the footer's offset and a
// description of the first problem, or "".
func checkParquetFooter(data []byte) (int64, string) {
	n := int64(len(data))
	if n < 12 || string(data[:4]) != "PAR1" || string(data[n-4:]) != "PAR1" {
		return 0, "not a Parquet file (PAR1 magic missing)"
	}
	flen := int64(binary.LittleEndian.Uint32(data[n-8:]))
	if flen > n-12 {
		return n - 8, fmt.Sprintf("footer length %d exceeds the file", flen)
	}
	off := n - 8 - flen
	c := &compactChecker{b: data[off : n-8]}
	c.structure(0)
	if c.err != "" {
		return off + int64(c.pos), c.err
	}
	return off, ""
}

type compactChecker struct {
	b   []byte
	pos int
	err string
}

func (c *compactChecker) fail(s string) {
	if c.err == "" {
		c.err = "footer: " + s
	}
}

func (c *compactChecker) left() int { return len(c.b) - c.pos }

func (c *compactChecker) byte1() byte {
	if c.err != "" || c.pos >= len(c.b) {
		c.fail("truncated")
		return 0
	}
	v := c.b[c.pos]
	c.pos++
	return v
}

func (c *compactChecker) uvarint() uint64 {
	if c.err != "" {
		return 0
	}
	v, k := binary.Uvarint(c.b[c.pos:])
	if k <= 0 {
		c.fail("bad varint")
		return 0
	}
	c.pos += k
	return v
}

func (c *compactChecker) skip(n uint64) {
	if c.err == "" && n > uint64(c.left()) {
		c.fail(fmt.Sprintf("length %d exceeds the %d bytes left", n, c.left()))
		return
	}
	c.pos += int(n)
}

const maxThriftDepth = 64

// value skips one value of compact type t.
func (c *compactChecker) value(t byte, depth int) {
	if depth > maxThriftDepth {
		c.fail("nesting too deep")
		return
	}
	switch t {
	case 1, 2: // bool in a field header
	case 3:
		c.skip(1)
	case 4, 5, 6:
		c.uvarint()
	case 7:
		c.skip(8)
	case 8:
		c.skip(c.uvarint())
	case 9, 10:
		h := c.byte1()
		size := uint64(h >> 4)
		if size == 15 {
			size = c.uvarint()
		}
		et := h & 15
		if c.err == "" && size > uint64(c.left()) {
			c.fail(fmt.Sprintf("list of %d elements in %d bytes", size, c.left()))
			return
		}
		for i := uint64(0); i < size && c.err == ""; i++ {
			if et == 1 || et == 2 {
				c.skip(1) // a bool element is one byte
				continue
			}
			c.value(et, depth+1)
		}
	case 11:
		size := c.uvarint()
		if size == 0 {
			return
		}
		kv := c.byte1()
		if c.err == "" && size > uint64(c.left()) {
			c.fail(fmt.Sprintf("map of %d entries in %d bytes", size, c.left()))
			return
		}
		for i := uint64(0); i < size && c.err == ""; i++ {
			c.value(kv>>4, depth+1)
			c.value(kv&15, depth+1)
		}
	case 12:
		c.structure(depth + 1)
	default:
		c.fail(fmt.Sprintf("unknown compact type %d", t))
	}
}

func (c *compactChecker) structure(depth int) {
	if depth > maxThriftDepth {
		c.fail("nesting too deep")
		return
	}
	for c.err == "" {
		h := c.byte1()
		if h == 0 {
			return // STOP
		}
		if h>>4 == 0 {
			c.uvarint() // explicit field id (zigzag i16)
		}
		c.value(h&15, depth)
	}
}
