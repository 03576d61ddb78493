package datasets

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Qrels holds relevance judgements: Judgments[queryID][docID] = rel, with
// rel as written in the file. Relevant means rel > 0 (trec_eval's rule);
// Cranfield's -1 means "not relevant" and is kept as -1.
type Qrels struct {
	Judgments map[string]map[string]int
	Lines     int // judgement lines read (excluding blank lines)
	Blank     int // blank (or all-white-space) lines skipped
	Relevant  int // lines with rel > 0
	NonRel    int // lines with rel <= 0
}

// QrelsFormat selects the column layout of ReadQrels.
type QrelsFormat int

const (
	// TRECQrels: "qid iter docid rel" (iter is ignored).
	TRECQrels QrelsFormat = iota
	// CranQrels: Cranfield's cranqrel, "qid docid rel".
	CranQrels
)

// ReadQrels parses judgements, one per line, fields separated by white
// space; blank lines are skipped and counted. Errors (*CorruptError, with
// line number and byte offset): a wrong number of fields, a relevance that
// is not an integer or an integral decimal ("0.000000" and "2.0" are read as
// 0 and 2, as tools that write float grades print them; "0.5" is an
// error), a (query, document) pair judged twice.
func ReadQrels(r io.Reader, name string, format QrelsFormat) (*Qrels, error) {
	want := 4
	if format == CranQrels {
		want = 3
	}
	q := &Qrels{Judgments: map[string]map[string]int{}}
	lr := newLineReader(r, name)
	for lr.Next() {
		f := strings.Fields(lr.text)
		if len(f) == 0 {
			q.Blank++
			continue
		}
		if len(f) != want {
			return nil, lr.corrupt(-1, "%d fields, want %d", len(f), want)
		}
		qid, doc, relS := f[0], f[len(f)-2], f[len(f)-1]
		rel, err := parseRel(relS)
		if err != nil {
			return nil, lr.corrupt(-1, "relevance %q is not an integer (or an integral number such as 1.0)", relS)
		}
		m := q.Judgments[qid]
		if m == nil {
			m = map[string]int{}
			q.Judgments[qid] = m
		}
		if _, dup := m[doc]; dup {
			return nil, lr.corrupt(-1, "query %s document %s judged twice", qid, doc)
		}
		m[doc] = rel
		q.Lines++
		if rel > 0 {
			q.Relevant++
		} else {
			q.NonRel++
		}
	}
	if lr.err != nil {
		return nil, lr.err
	}
	return q, nil
}

// ReadQrelsFile is ReadQrels on a file.
func ReadQrelsFile(path string, format QrelsFormat) (*Qrels, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("datasets: %w", err)
	}
	defer f.Close()
	return ReadQrels(f, path, format)
}

// RelevantCount returns the number of documents with rel > 0 for query qid.
func (q *Qrels) RelevantCount(qid string) int {
	n := 0
	for _, r := range q.Judgments[qid] {
		if r > 0 {
			n++
		}
	}
	return n
}

// parseRel reads a relevance grade: an integer, or a finite decimal with an
// integral value within int32.
func parseRel(s string) (int, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || f < math.MinInt32 || f > math.MaxInt32 {
		return 0, fmt.Errorf("relevance %q is not integral", s)
	}
	return int(f), nil
}
