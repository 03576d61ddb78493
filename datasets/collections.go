package datasets

import (
	"fmt"
	"path/filepath"
	"strconv"
)

// Document is one document of a text test collection.
type Document struct {
	ID    string // the id the qrels use
	Title string // whitespace-collapsed title ("" if the collection has none)
	Text  string // whitespace-collapsed body (Cranfield: the .W abstract)
}

// Content returns the text to index: Title + ". " + Text when both are
// non-empty (how the use512 Cranfield vectors were embedded), else the
// non-empty one.
func (d Document) Content() string {
	switch {
	case d.Title == "":
		return d.Text
	case d.Text == "":
		return d.Title
	}
	return d.Title + ". " + d.Text
}

// Query is one query (topic) of a text test collection.
type Query struct {
	ID   string // the id the qrels use
	Text string // whitespace-collapsed query text, as written
}

// Collection is a loaded IR test collection with its judgements and the
// use512 sentence-embedding vectors (row i of DocVecs belongs to Docs[i],
// row i of QueryVecs to Queries[i]; 512-d, approximately unit length).
type Collection struct {
	Name      string
	Docs      []Document
	Queries   []Query
	Qrels     *Qrels
	DocVecs   Matrix[float32]
	QueryVecs Matrix[float32]
}

// Cranfield and Vaswani file names inside their directories.
const (
	CranDocsFile    = "cran.all.1400"
	CranQueriesFile = "cran.qry"
	CranQrelsFile   = "cranqrel"
	VaswaniDocs     = "doc-text.trec"
	VaswaniQueries  = "query-text.trec"
	VaswaniQrels    = "qrels"
	Use512DocsFile  = "use512-docs.fvecs"
	Use512QueryFile = "use512-queries.fvecs"
)

// LoadCranfield loads the Cranfield 1400 collection from dir (normally
// filepath.Join(Dir(), "cranfield")). Document ids are the .I numbers;
// query ids are the 1-based ordinal positions in cran.qry ("1".."225"),
// which is how cranqrel refers to them (the .I numbers of cran.qry skip
// values). Qrels keep Cranfield's grades: 1 = complete answer ... 4 =
// minimum interest, -1 = not relevant.
func LoadCranfield(dir string) (*Collection, error) {
	recs, err := ReadIRecordsFile(filepath.Join(dir, CranDocsFile))
	if err != nil {
		return nil, err
	}
	c := &Collection{Name: "cranfield"}
	for _, r := range recs {
		c.Docs = append(c.Docs, Document{ID: r.ID, Title: collapseSpace(r.Field("T")), Text: collapseSpace(r.Field("W"))})
	}
	qrecs, err := ReadIRecordsFile(filepath.Join(dir, CranQueriesFile))
	if err != nil {
		return nil, err
	}
	for _, r := range qrecs {
		c.Queries = append(c.Queries, Query{ID: strconv.Itoa(r.Ordinal), Text: collapseSpace(r.Field("W"))})
	}
	if c.Qrels, err = ReadQrelsFile(filepath.Join(dir, CranQrelsFile), CranQrels); err != nil {
		return nil, err
	}
	return c, c.finish(dir)
}

// LoadVaswani loads the NPL (Vaswani) collection from dir (normally
// filepath.Join(Dir(), "vaswani")). Ids are the DOCNO and <num> values.
// Query texts are the titles as written (upper case; the use512 query
// vectors were embedded from the lower-cased titles).
func LoadVaswani(dir string) (*Collection, error) {
	docs, err := ReadTRECDocsFile(filepath.Join(dir, VaswaniDocs))
	if err != nil {
		return nil, err
	}
	c := &Collection{Name: "vaswani"}
	for _, d := range docs {
		c.Docs = append(c.Docs, Document{ID: d.DocNo, Text: d.Text})
	}
	tops, err := ReadTRECTopicsFile(filepath.Join(dir, VaswaniQueries))
	if err != nil {
		return nil, err
	}
	for _, t := range tops {
		c.Queries = append(c.Queries, Query{ID: t.Num, Text: t.Title})
	}
	if c.Qrels, err = ReadQrelsFile(filepath.Join(dir, VaswaniQrels), TRECQrels); err != nil {
		return nil, err
	}
	return c, c.finish(dir)
}

// finish loads the vectors and checks that every judged query and document
// exists and that the vector counts match.
func (c *Collection) finish(dir string) error {
	var err error
	if c.DocVecs, err = ReadFvecs(filepath.Join(dir, Use512DocsFile)); err != nil {
		return err
	}
	if c.QueryVecs, err = ReadFvecs(filepath.Join(dir, Use512QueryFile)); err != nil {
		return err
	}
	if c.DocVecs.N != len(c.Docs) || c.QueryVecs.N != len(c.Queries) || c.DocVecs.D != c.QueryVecs.D {
		return fmt.Errorf("datasets: %s: %d docs / %d doc vectors (d=%d), %d queries / %d query vectors (d=%d)",
			c.Name, len(c.Docs), c.DocVecs.N, c.DocVecs.D, len(c.Queries), c.QueryVecs.N, c.QueryVecs.D)
	}
	docs := make(map[string]bool, len(c.Docs))
	for _, d := range c.Docs {
		docs[d.ID] = true
	}
	qs := make(map[string]bool, len(c.Queries))
	for _, q := range c.Queries {
		qs[q.ID] = true
	}
	for qid, m := range c.Qrels.Judgments {
		if !qs[qid] {
			return fmt.Errorf("datasets: %s: judgements for unknown query %q", c.Name, qid)
		}
		for did := range m {
			if !docs[did] {
				return fmt.Errorf("datasets: %s: query %s judges unknown document %q", c.Name, qid, did)
			}
		}
	}
	return nil
}
