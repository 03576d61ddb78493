package tier

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/stratasearch/strata/engine/ivfpq"
	"github.com/stratasearch/strata/internal/inspect"
)

// InspectArchive describes a cold archive (doc.go "Cold archive file", a
// Parquet file) from its footer only: the Parquet version, writer and row
// count, every row group and column chunk (type, compression, values,
// compressed and uncompressed bytes) as sections, the key-value metadata
// with our format version and archive description decoded, and the
// embedded IVF-PQ codec (strata.codec, base64) inspected as a child (its
// offsets are in the decoded codec bytes, not the file). Problems: a
// footer that does not parse (its Thrift lengths are checked before
// parquet-go decodes it), a missing or newer strata.format_version, an
// archive description that disagrees with the file, a column chunk
// outside the data region. Parquet has no whole-file checksum and our
// writer stores no page CRCs, so Checksums stays empty. No page is read.
//
// Errors: only when b does not start with the "PAR1" magic.
func InspectArchive(b []byte) (in *inspect.Info, err error) {
	if len(b) < 4 || string(b[:4]) != "PAR1" {
		return nil, fmt.Errorf("tier: not a Parquet file (no PAR1 magic)")
	}
	n := int64(len(b))
	in = &inspect.Info{Format: "parquet", Size: n}
	in.Add("magic", "PAR1", 0)
	if at, why := checkParquetFooter(b); why != "" {
		in.Problemf(at, "%s", why)
		return in, nil
	}
	flen := int64(binary.LittleEndian.Uint32(b[n-8:]))
	fstart := n - 8 - flen
	in.Add("footerLength", flen, n-8)
	defer func() {
		if r := recover(); r != nil {
			in.Problemf(fstart, "parquet decoder: %v", r)
		}
	}()
	f, err := parquet.OpenFile(bytes.NewReader(b), n, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		in.Problemf(fstart, "parquet footer: %v", err)
		return in, nil
	}
	md := f.Metadata()
	in.Add("parquetVersion", md.Version, fstart)
	in.Add("createdBy", md.CreatedBy, fstart)
	in.Add("numRows", md.NumRows, fstart)
	in.Add("rowGroups", len(md.RowGroups), fstart)
	for _, kv := range md.KeyValueMetadata {
		v := kv.Value
		if len(v) > 120 {
			v = fmt.Sprintf("(%d bytes)", len(v))
		}
		in.Add("kv "+kv.Key, v, fstart)
	}
	fv, ok := f.Lookup(kvFormat)
	if !ok {
		in.Problemf(fstart, "no %s key-value entry (not a Strata cold archive)", kvFormat)
	} else if v, err := strconv.Atoi(fv); err != nil || v < 1 {
		in.Problemf(fstart, "bad %s %q", kvFormat, fv)
	} else {
		in.Version = v
		if v > coldFormatVersion {
			in.Problemf(fstart, "cold archive format version %d is newer than this build reads (%d)", v, coldFormatVersion)
		}
	}
	if ij, ok := f.Lookup(kvArchive); ok {
		var info archiveInfo
		dec := json.NewDecoder(strings.NewReader(ij))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&info); err != nil {
			in.Problemf(fstart, "%s: %v", kvArchive, err)
		} else {
			in.Add("dim", info.Dim, -1)
			in.Add("metric", info.Metric, -1)
			in.Add("rows", info.Rows, -1)
			in.Add("minEpoch", info.MinEpoch, -1)
			in.Add("maxEpoch", info.MaxEpoch, -1)
			in.Add("exactVectors", info.Vectors, -1)
			if md.NumRows < 0 || uint64(md.NumRows) != info.Rows {
				in.Problemf(fstart, "parquet has %d rows, %s says %d", md.NumRows, kvArchive, info.Rows)
			}
		}
	} else if ok {
		in.Problemf(fstart, "no %s key-value entry", kvArchive)
	}
	if cs, ok := f.Lookup(kvCodec); ok {
		cb, err := base64.StdEncoding.DecodeString(cs)
		if err != nil {
			in.Problemf(fstart, "%s: %v", kvCodec, err)
		} else if child, err := ivfpq.Inspect(cb); err != nil {
			in.Problemf(fstart, "%s: %v", kvCodec, err)
		} else {
			child.Path = "kv " + kvCodec + " (base64-decoded; offsets within it)"
			in.Children = append(in.Children, child)
		}
	}
	var rows int64
	for g, rg := range md.RowGroups {
		rows += rg.NumRows
		var comp int64
		for _, c := range rg.Columns {
			m := c.MetaData
			off := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < off {
				off = m.DictionaryPageOffset
			}
			name := fmt.Sprintf("rg%d/%s", g, strings.Join(m.PathInSchema, "."))
			in.AddSection(name, off, m.TotalCompressedSize, nil)
			in.Add(name, fmt.Sprintf("%s %s values=%d bytes=%d/%d", m.Type, m.Codec, m.NumValues, m.TotalCompressedSize, m.TotalUncompressedSize), -1)
			if off < 4 || m.TotalCompressedSize < 0 || off > fstart || m.TotalCompressedSize > fstart-off {
				in.Problemf(fstart, "column chunk %s at [%d, +%d) outside the data region [4, %d)", name, off, m.TotalCompressedSize, fstart)
			}
			comp += m.TotalCompressedSize
		}
		in.Add(fmt.Sprintf("rg%d", g), fmt.Sprintf("rows=%d bytes=%d compressed=%d", rg.NumRows, rg.TotalByteSize, comp), -1)
	}
	if rows != md.NumRows {
		in.Problemf(fstart, "row groups hold %d rows, footer says %d", rows, md.NumRows)
	}
	in.AddSection("footer", fstart, flen+8, nil)
	return in, nil
}
