package datasets

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func idxImages(n, rows, cols int, pix func(i int) byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, IDXMagicImages)
	for _, v := range []int{n, rows, cols} {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	for i := 0; i < n*rows*cols; i++ {
		b = append(b, pix(i))
	}
	return b
}

func idxLabels(labels []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, IDXMagicLabels)
	b = binary.BigEndian.AppendUint32(b, uint32(len(labels)))
	return append(b, labels...)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func TestIDX(t *testing.T) {
	raw := idxImages(3, 2, 4, func(i int) byte { return byte(i * 11) })
	for _, data := range [][]byte{raw, gz(raw)} {
		im, err := DecodeIDXImages(bytes.NewReader(data), "img")
		if err != nil {
			t.Fatal(err)
		}
		if im.N != 3 || im.D != 8 || im.Rows != 2 || im.Cols != 4 {
			t.Fatalf("shape %d×%d (%d×%d)", im.N, im.D, im.Rows, im.Cols)
		}
		for i, v := range im.Data {
			if v != float32(byte(i*11)) {
				t.Fatalf("pixel %d = %v", i, v)
			}
		}
	}
	lab := []byte{9, 0, 3, 255}
	for _, data := range [][]byte{idxLabels(lab), gz(idxLabels(lab))} {
		got, err := DecodeIDXLabels(bytes.NewReader(data), "lab")
		if err != nil || !slices.Equal(got, lab) {
			t.Fatalf("labels %v %v", got, err)
		}
	}
	// Files: gzip detected by content, not extension.
	dir := t.TempDir()
	p := filepath.Join(dir, "x-idx3-ubyte")
	os.WriteFile(p, gz(raw), 0o644)
	if im, err := ReadIDXImages(p); err != nil || im.N != 3 {
		t.Fatalf("ReadIDXImages: %v", err)
	}
	p = filepath.Join(dir, "y-idx1-ubyte.gz")
	os.WriteFile(p, gz(idxLabels(lab)), 0o644)
	if l, err := ReadIDXLabels(p); err != nil || len(l) != 4 {
		t.Fatalf("ReadIDXLabels: %v", err)
	}
}

func TestIDXCorruption(t *testing.T) {
	raw := idxImages(3, 2, 2, func(int) byte { return 1 })
	for _, tc := range []struct {
		name   string
		data   []byte
		labels bool
		offset int64
		msg    string
	}{
		{"empty", nil, false, 0, "truncated magic"},
		{"wrong magic", idxLabels([]byte{1}), false, 0, "magic"},
		{"labels as images", raw, true, 0, "magic"},
		{"truncated header", raw[:10], false, 8, "truncated dimension"},
		{"truncated image", raw[:len(raw)-1], false, 16 + 8, "truncated image"},
		{"trailing data", append(slices.Clone(raw), 0), false, int64(len(raw)), "trailing"},
		{"zero cols", idxImages(1, 2, 0, nil), false, 12, "out of range"},
		{"zero rows", idxImages(1, 0, 2, nil), false, 8, "out of range"},
		{"huge image", idxImages(0, 1<<15, 1<<15, nil), false, 8, "out of range"},
		{"truncated labels", idxLabels([]byte{1, 2, 3})[:10], true, 10, "truncated labels"},
		{"truncated gzip", gz(raw)[:20], false, -1, ""},
	} {
		var err error
		if tc.labels {
			_, err = DecodeIDXLabels(bytes.NewReader(tc.data), "f.idx")
		} else {
			_, err = DecodeIDXImages(bytes.NewReader(tc.data), "f.idx")
		}
		var ce *CorruptError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) {
			t.Fatalf("%s: error %v is not corrupt", tc.name, err)
		}
		if tc.offset >= 0 && (ce.Offset != tc.offset || !strings.Contains(err.Error(), tc.msg)) {
			t.Errorf("%s: offset %d: %v", tc.name, ce.Offset, err)
		}
		if !strings.Contains(err.Error(), "f.idx") {
			t.Errorf("%s: error does not name the file: %v", tc.name, err)
		}
	}
	// A header claiming 2^31-1 images must not allocate them up front.
	huge := idxImages(0, 28, 28, nil)
	binary.BigEndian.PutUint32(huge[4:], 1<<31-1)
	if _, err := DecodeIDXImages(bytes.NewReader(huge), "huge"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("huge count: %v", err)
	}
}

func FuzzIDXImages(f *testing.F) {
	raw := idxImages(2, 2, 3, func(i int) byte { return byte(i) })
	f.Add(raw)
	f.Add(gz(raw))
	f.Add(raw[:9])
	f.Add(idxLabels([]byte{1, 2}))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := DecodeIDXImages(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		if im.D != im.Rows*im.Cols || len(im.Data) != im.N*im.D {
			t.Fatalf("inconsistent %d×%d, %d values", im.N, im.D, len(im.Data))
		}
	})
}

func FuzzIDXLabels(f *testing.F) {
	f.Add(idxLabels([]byte{1, 2, 3}))
	f.Add(gz(idxLabels([]byte{4})))
	f.Add(idxLabels([]byte{1, 2, 3})[:9])
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := DecodeIDXLabels(bytes.NewReader(data), "fuzz")
		if err == nil && len(data) >= 8 && !isGzipMagic(data) && len(l) != int(binary.BigEndian.Uint32(data[4:])) {
			t.Fatalf("%d labels, header says %d", len(l), binary.BigEndian.Uint32(data[4:]))
		}
	})
}

func isGzipMagic(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }
