package ingest

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/contract"
	"github.com/stratasearch/strata/ingest/lang"
)

// EmbedText is the text Index embeds for a chunk (Options.Embedder): what
// a sentence encoder can make sense of, not the code itself. For a Go
// declaration it is its names, each also split into words ("EqualFold
// (equal fold)"), the doc comment without its comment markers, the first
// line of the declaration (the signature) and "(in <path>)" — in the
// languages of package lang, the comment lines above the definition
// (//, ///, /** */, # in Python; decorators and attributes skipped), its
// first line, and a Python docstring's first line; for other
// text, the span and the path. The result is cut to maxBytes on a rune
// boundary, so the most telling words come first: the bundled USE-Lite
// model's cost grows about quadratically with the text's length (a
// 100-character text embeds about 5× faster than a 230-character one on
// our machines). names and kind come from the Chunk, span is its source
// text, rel the path relative to the indexed root.
func EmbedText(rel string, c Chunk, span []byte, maxBytes int) string {
	var b strings.Builder
	if len(c.Names) > 0 {
		names := c.Names
		if c.Kind == "method" && c.Symbol != "" {
			names = []string{c.Symbol}
		}
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n)
			if w := splitWords(n); w != strings.ToLower(n) {
				b.WriteString(" (" + w + ")")
			}
		}
		b.WriteString(". ")
	}
	if c.Kind == "text" || c.Kind == "" {
		b.Write(span)
	} else if tag := Lang(rel); tag != "go" && lang.Supported(tag) {
		docSignature(&b, tag, string(span))
	} else {
		// Doc comment lines, then the first code line.
		for _, l := range strings.Split(string(span), "\n") {
			t := strings.TrimSpace(l)
			switch {
			case strings.HasPrefix(t, "//"):
				t = strings.TrimSpace(strings.TrimPrefix(t, "//"))
				if t != "" {
					b.WriteString(t)
					b.WriteByte(' ')
				}
				continue
			case t == "":
				continue
			}
			b.WriteString(strings.TrimSpace(strings.TrimSuffix(t, "{")))
			break
		}
	}
	b.WriteString(" (in " + rel + ")")
	s := strings.TrimSpace(b.String())
	if len(s) > maxBytes {
		cut := maxBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// splitWords turns an identifier into lower-case words: "EqualFold" →
// "equal fold", "parseHTTPRequest" → "parse http request",
// "Builder.WriteString" → "builder write string", "read_full" → "read full".
func splitWords(id string) string {
	var words []string
	var cur []rune
	rs := []rune(id)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case r == '_' || r == '.' || !(unicode.IsLetter(r) || unicode.IsDigit(r)):
			flush()
			continue
		case unicode.IsUpper(r) && len(cur) > 0:
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return strings.Join(words, " ")
}

// writeBatch is one engine write of the pipeline: docs to upsert (with
// their embedding texts when an embedder is set), then ids to delete.
type writeBatch struct {
	docs  []contract.Document
	texts []string
	dels  []string
}

// writer applies batches in order on its own goroutine, embedding each
// batch's documents first (Options.Embedder, EmbedBatch texts per call),
// so reading and chunking the next files overlaps embedding and writing.
// The first error stops it; later batches are drained unapplied.
type writer struct {
	ix     *Indexer
	p      Progress
	in     chan writeBatch
	done   chan struct{} // closed when the goroutine has returned
	failed chan struct{} // closed once err is set
	err    error

	// Statistics, read after done closes.
	chunks, deleted, batches, embedded int
	embedBytes                         int64
	writeTime, embedTime               time.Duration
}

func (ix *Indexer) startWriter(ctx context.Context, p Progress) *writer {
	w := &writer{ix: ix, p: p, in: make(chan writeBatch, 1), done: make(chan struct{}), failed: make(chan struct{})}
	go func() {
		defer close(w.done)
		for b := range w.in {
			if w.err != nil {
				continue
			}
			if w.err = w.apply(ctx, b); w.err != nil {
				close(w.failed)
			}
		}
	}()
	return w
}

// send queues b; it returns the writer's error if it has failed. Once it
// fails the batch is dropped.
func (w *writer) send(b writeBatch) error {
	select {
	case <-w.failed:
		return w.err
	case w.in <- b:
		return nil
	}
}

// close waits for every queued batch and returns the first error.
func (w *writer) close() error {
	close(w.in)
	<-w.done
	return w.err
}

func (w *writer) apply(ctx context.Context, b writeBatch) error {
	col, o := w.ix.col, w.ix.o
	if len(b.docs) > 0 && o.Embedder != nil {
		// The embedder is a separate service: it must never see a secret
		// that Upsert would redact from the stored content.
		for i := range b.texts {
			if col.RedactionApplies(b.docs[i].Trust) {
				b.texts[i] = engine.RedactSecrets(b.texts[i]).Text
			}
		}
		te := time.Now()
		for lo := 0; lo < len(b.docs); lo += o.EmbedBatch {
			hi := min(lo+o.EmbedBatch, len(b.docs))
			vecs, err := o.Embedder.Embed(ctx, b.texts[lo:hi])
			if err != nil {
				return fmt.Errorf("ingest: embed chunks (%s ...): %w", b.docs[lo].ID, err)
			}
			if len(vecs) != hi-lo {
				return fmt.Errorf("ingest: embedder returned %d vectors for %d chunks", len(vecs), hi-lo)
			}
			var nb int64
			for j := lo; j < hi; j++ {
				b.docs[j].Vector = vecs[j-lo]
				nb += int64(len(b.texts[j]))
			}
			w.embedded += hi - lo
			w.embedBytes += nb
			if w.p.Embedded != nil {
				w.p.Embedded(hi-lo, nb)
			}
		}
		w.embedTime += time.Since(te)
	}
	tw := time.Now()
	defer func() { w.writeTime += time.Since(tw) }()
	if len(b.docs) > 0 {
		// The documents name the files they were just read from: their
		// sources are vouched for, wherever the indexed root is.
		if _, err := col.Upsert(ctx, b.docs, engine.VerifiableSources()); err != nil {
			return fmt.Errorf("ingest: upsert: %w", err)
		}
		w.batches++
		w.chunks += len(b.docs)
	}
	if len(b.dels) > 0 {
		if _, err := col.Delete(ctx, b.dels); err != nil {
			return fmt.Errorf("ingest: delete: %w", err)
		}
		w.batches++
		w.deleted += len(b.dels)
	}
	return nil
}

// docSignature writes a definition's doc comment without its markers,
// its first code line, and (Python) its docstring's first line.
func docSignature(b *strings.Builder, tag, span string) {
	lines := strings.Split(span, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "", strings.HasPrefix(t, "@"), strings.HasPrefix(t, "#["), t == "*/":
			continue
		case strings.HasPrefix(t, "//"), strings.HasPrefix(t, "/*"), strings.HasPrefix(t, "*"),
			tag == "python" && strings.HasPrefix(t, "#"):
			t = strings.TrimLeft(t, "/*#!")
			t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t), "*/"))
			if t != "" {
				b.WriteString(t)
				b.WriteByte(' ')
			}
			continue
		}
		b.WriteString(strings.TrimSpace(strings.TrimSuffix(t, "{")))
		if tag == "python" {
			for _, d := range lines[i+1:] {
				d = strings.TrimSpace(d)
				if d == "" {
					continue
				}
				d = strings.TrimLeft(d, "rRuUbB")
				if q := d[:min(3, len(d))]; q == `"""` || q == "'''" {
					d = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(d[3:]), q))
					if d != "" {
						b.WriteString(" " + d)
					}
				}
				break
			}
		}
		return
	}
}
