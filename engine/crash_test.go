package engine

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/vfs"
	"github.com/stratasearch/strata/vfs/errorfs"
)

// The crash tests run one DB-level operation over the crashable in-memory
// FS (vfs.NewCrashableMem behind an errorfs counter), count its file-system
// operations, then repeat it once per operation k, taking the crash image
// (CrashCloneWith: unsynced tails dropped, torn or kept at random) right
// before operation k runs, and once after the last. Every image must open,
// keep every other collection's acknowledged documents, and show the
// operation either not done or done, never half.

const crashDir = "/db"

// crashDocs are the acknowledged documents of a collection named name.
func crashDocs(name string, n int) []contract.Document {
	out := make([]contract.Document, n)
	for i := range out {
		out[i] = doc(fmt.Sprintf("%s-%02d", name, i), fmt.Sprintf("%s alpha beta %d", name, i),
			[]float32{float32(i + 1), 1, float32(i % 3), 0.5})
	}
	return out
}

var crashOpts = CollectionOptions{Dim: 4, Sync: "always"}

// quiet drops the recovery warnings of the many reopened images.
var quiet = slog.New(slog.DiscardHandler)

// checkDocs fails unless c holds exactly want (by id and content).
func checkDocs(t *testing.T, where string, c *Collection, want []contract.Document) {
	t.Helper()
	ctx := context.Background()
	sn, err := c.Snapshot()
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	defer sn.Close()
	got := sn.IDs()
	if len(got) != len(want) {
		t.Fatalf("%s: collection %q has %d documents, want %d", where, c.Name(), len(got), len(want))
	}
	for _, d := range want {
		g, err := c.Get(ctx, d.ID)
		if err != nil || g.Content != d.Content {
			t.Fatalf("%s: collection %q document %q: %q, %v", where, c.Name(), d.ID, g.Content, err)
		}
	}
}

// crashEach runs setup (on a fresh DB over a fresh crashable FS) and then
// run, once to count run's operations and once per crash point; check gets
// each reopened image and the index of the crash point (total = after the
// last operation).
func crashEach(t *testing.T, seed uint64, setup func(db *DB), run func(db *DB), check func(t *testing.T, db *DB, image *vfs.MemFS, at, total int)) {
	t.Helper()
	once := func(crashAt int, rng *rand.Rand) (*vfs.MemFS, int) {
		mem := vfs.NewCrashableMem()
		var armed atomic.Bool
		var n atomic.Int64
		var image *vfs.MemFS
		inj := errorfs.InjectorFunc{Name: "crash", Fn: func(errorfs.Op) error {
			if armed.Load() && int(n.Add(1)-1) == crashAt && image == nil {
				image = mem.CrashCloneWith(vfs.CrashOptions{Rand: rng})
			}
			return nil
		}}
		db, err := Open(crashDir, Options{FS: errorfs.Wrap(mem, inj), Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		setup(db)
		armed.Store(true)
		run(db)
		armed.Store(false)
		if image == nil {
			image = mem.CrashCloneWith(vfs.CrashOptions{Rand: rng})
		}
		// The crashed process never closes the DB; closing it here only
		// releases its goroutines (the image is already taken).
		db.Close()
		return image, int(n.Load())
	}
	_, total := once(-1, nil)
	if total == 0 {
		t.Fatal("the operation did no file-system operation")
	}
	t.Logf("%d crash points (file-system operations of the call, and after the last)", total+1)
	rng := rand.New(rand.NewPCG(seed, 1))
	for at := 0; at <= total; at++ {
		image, _ := once(at, rng)
		db, err := Open(crashDir, Options{FS: image, Logger: quiet})
		if err != nil {
			t.Fatalf("crash before op %d of %d: reopen: %v", at, total, err)
		}
		check(t, db, image, at, total)
		db.Close()
	}
}

func mustCreate(t *testing.T, db *DB, name string, docs []contract.Document) *Collection {
	t.Helper()
	c, err := db.CreateCollection(name, crashOpts)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) > 0 {
		mustUpsert(t, c, docs...)
	}
	return c
}

// noDropLeftovers fails if the image, after Open, still has a dropped
// collection's directory.
func noDropLeftovers(t *testing.T, where string, image *vfs.MemFS) {
	t.Helper()
	names, err := image.List(crashDir + "/" + collectionsDir)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, dropPrefix) {
			t.Fatalf("%s: Open left %s", where, n)
		}
	}
}

// TestCrashCreateCollection: a crash anywhere in CreateCollection leaves
// the new collection absent (and creatable again) or present with its
// options (and writable); the other collection keeps its documents.
func TestCrashCreateCollection(t *testing.T) {
	keep := crashDocs("keep", 6)
	outcomes := map[bool]int{}
	crashEach(t, 11,
		func(db *DB) { mustCreate(t, db, "keep", keep) },
		func(db *DB) { mustCreate(t, db, "new", nil) },
		func(t *testing.T, db *DB, image *vfs.MemFS, at, total int) {
			where := fmt.Sprintf("crash before op %d of %d", at, total)
			k, err := db.Collection("keep")
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			checkDocs(t, where, k, keep)
			c, err := db.Collection("new")
			present := err == nil
			outcomes[present]++
			if !present {
				if got := db.Collections(); !slices.Equal(got, []string{"keep"}) {
					t.Fatalf("%s: collections %v", where, got)
				}
				// The leftovers of the unfinished create do not block a
				// new one.
				if c, err = db.CreateCollection("new", crashOpts); err != nil {
					t.Fatalf("%s: create again: %v", where, err)
				}
			} else if o := c.Options(); o.Dim != crashOpts.Dim || o.Sync != crashOpts.Sync {
				t.Fatalf("%s: options %+v", where, o)
			}
			checkDocs(t, where, c, nil)
			d := crashDocs("new", 2)
			mustUpsert(t, c, d...)
			checkDocs(t, where, c, d)
			if at == total && !present {
				t.Fatalf("%s: a finished CreateCollection is not durable", where)
			}
		})
	if outcomes[false] == 0 || outcomes[true] == 0 {
		t.Fatalf("outcomes %v: want both absent and present", outcomes)
	}
}

// TestCrashDropCollection: a crash anywhere in DropCollection leaves the
// dropped collection whole (every document) or gone (Open finishes the
// removal, and the name is free); the other collection keeps its
// documents.
func TestCrashDropCollection(t *testing.T) {
	keep, gone := crashDocs("keep", 5), crashDocs("gone", 7)
	outcomes := map[bool]int{}
	crashEach(t, 12,
		func(db *DB) {
			mustCreate(t, db, "gone", gone)
			mustCreate(t, db, "keep", keep)
		},
		func(db *DB) {
			if err := db.DropCollection("gone"); err != nil {
				t.Fatal(err)
			}
		},
		func(t *testing.T, db *DB, image *vfs.MemFS, at, total int) {
			where := fmt.Sprintf("crash before op %d of %d", at, total)
			k, err := db.Collection("keep")
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			checkDocs(t, where, k, keep)
			noDropLeftovers(t, where, image)
			g, err := db.Collection("gone")
			present := err == nil
			outcomes[present]++
			if present {
				if at == total {
					t.Fatalf("%s: a finished DropCollection is not durable", where)
				}
				checkDocs(t, where, g, gone)
				return
			}
			if got := db.Collections(); !slices.Equal(got, []string{"keep"}) {
				t.Fatalf("%s: collections %v", where, got)
			}
			g, err = db.CreateCollection("gone", crashOpts)
			if err != nil {
				t.Fatalf("%s: create again: %v", where, err)
			}
			checkDocs(t, where, g, nil)
		})
	if outcomes[false] == 0 || outcomes[true] == 0 {
		t.Fatalf("outcomes %v: want both present and gone", outcomes)
	}
}

// TestCrashCursorKey: a crash anywhere in the first search that issues a
// NextCursor (it creates the DB's cursor key) leaves no key (the next
// search creates one) or exactly the key that signed the cursor, never a
// torn or empty one; collections keep their documents.
func TestCrashCursorKey(t *testing.T) {
	docs := crashDocs("c", 12)
	var key []byte
	var cur string
	outcomes := map[bool]int{}
	q := contract.Query{Text: "alpha", TopK: 3}
	crashEach(t, 13,
		func(db *DB) { mustCreate(t, db, "c", docs) },
		func(db *DB) {
			c, _ := db.Collection("c")
			res := mustSearch(t, c, q)
			if res.NextCursor == "" {
				t.Fatal("no NextCursor")
			}
			k, err := db.CursorKey()
			if err != nil {
				t.Fatal(err)
			}
			// Each run makes its own random key: check compares the
			// image with the key of the run that produced it.
			key, cur = k, res.NextCursor
		},
		func(t *testing.T, db *DB, image *vfs.MemFS, at, total int) {
			where := fmt.Sprintf("crash before op %d of %d", at, total)
			c, err := db.Collection("c")
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			checkDocs(t, where, c, docs)
			b, err := vfs.ReadFile(image, crashDir+"/"+CursorKeyFile)
			present := err == nil
			outcomes[present]++
			switch {
			case present && !slices.Equal(b, key):
				t.Fatalf("%s: cursor key file holds %d bytes, not the key that signed the cursor", where, len(b))
			case present:
				// The cursor of the crashed run verifies after the restart.
				if _, err := c.Search(context.Background(), contract.Query{Text: q.Text, TopK: q.TopK, Cursor: cur}); err != nil {
					t.Fatalf("%s: cursor after restart: %v", where, err)
				}
			case at == total:
				t.Fatalf("%s: the key of an issued cursor is not durable", where)
			default:
				// No key: the next search makes one, and pages with it.
				res := mustSearch(t, c, q)
				if res.NextCursor == "" {
					t.Fatalf("%s: no NextCursor after the restart", where)
				}
				if _, err := c.Search(context.Background(), contract.Query{Text: q.Text, TopK: q.TopK, Cursor: res.NextCursor}); err != nil {
					t.Fatalf("%s: new cursor: %v", where, err)
				}
			}
		})
	if outcomes[false] == 0 || outcomes[true] == 0 {
		t.Fatalf("outcomes %v: want both without and with a key", outcomes)
	}
}
