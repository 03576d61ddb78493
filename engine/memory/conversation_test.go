package memory

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

func TestConversationIngestAndEvidenceRecall(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("testdata/conversation.json")
	if err != nil {
		t.Fatal(err)
	}
	convs, err := ParseConversations(data)
	if err != nil {
		t.Fatal(err)
	}
	c := convs[0]
	if c.ID != "test-conv-1" || len(c.Sessions) != 3 || len(c.QA) != 8 || len(c.Sessions[1].Turns) != 6 {
		t.Fatalf("parsed %s: %d sessions, %d qa", c.ID, len(c.Sessions), len(c.QA))
	}
	if want := time.Date(2026, 3, 17, 18, 40, 0, 0, time.UTC); !c.Sessions[1].Date.Equal(want) {
		t.Fatalf("session 2 date %v", c.Sessions[1].Date)
	}
	s, clk, _ := openTest(t, Options{})
	clk.t = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC) // after the sessions
	ids, err := s.IngestConversation(ctx, "maya", c, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 17 {
		t.Fatalf("%d turns mapped", len(ids))
	}
	r, _ := s.Get("maya", ids["D3:1"])
	if r.Kind != Episode || r.Provenance != "conv:test-conv-1#D3:1" || !r.ValidFrom.Equal(c.Sessions[2].Date) {
		t.Fatalf("record %+v", r)
	}
	// "When did …": the record's valid time is the session date.
	res, err := s.Recall(ctx, Query{Subject: "maya", Text: "adopted greyhound", TopK: 1})
	if err != nil || len(res.Hits) != 1 || !res.Hits[0].Record.ValidFrom.Equal(c.Sessions[0].Date) {
		t.Fatalf("when-query: %+v %v", res.Hits, err)
	}
	r5, n, err := s.EvidenceRecall(ctx, "maya", c, ids, 5)
	if err != nil || n != 8 {
		t.Fatal(err, n)
	}
	r1, _, _ := s.EvidenceRecall(ctx, "maya", c, ids, 1)
	t.Logf("evidence recall@1 %.3f, recall@5 %.3f over %d questions (lexical BM25)", r1, r5, n)
	if r5 < 0.8 || r1 > r5 {
		t.Fatalf("evidence recall@5 %.3f (recall@1 %.3f)", r5, r1)
	}
	// Windows of 3 turns.
	s2, _, _ := openTest(t, Options{})
	ids3, err := s2.IngestConversation(ctx, "maya", c, IngestOptions{Window: 3})
	if err != nil {
		t.Fatal(err)
	}
	if ids3["D1:1"] != ids3["D1:3"] || ids3["D1:3"] == ids3["D1:4"] || s2.Len() != 6 {
		t.Fatalf("windows: %d records", s2.Len())
	}
}

func TestParseConversationErrors(t *testing.T) {
	bad := map[string]string{
		"not json":    `{`,
		"no date":     `{"session_1":[{"speaker":"a","dia_id":"D1:1","text":"x"}]}`,
		"bad date":    `{"session_1_date_time":"yesterday","session_1":[]}`,
		"bad turns":   `{"session_1_date_time":"2026-01-02","session_1":{"x":1}}`,
		"no dia_id":   `{"session_1_date_time":"2026-01-02","session_1":[{"speaker":"a","text":"x"}]}`,
		"repeat id":   `{"session_1_date_time":"2026-01-02","session_1":[{"dia_id":"D","text":"x"},{"dia_id":"D","text":"y"}]}`,
		"bad qa":      `{"qa":{"question":"x"}}`,
		"bad wrapper": `{"conversation":[1]}`,
	}
	for name, in := range bad {
		if _, err := ParseConversations([]byte(in)); !errors.Is(err, ErrConversation) {
			t.Errorf("%s: %v", name, err)
		}
	}
	got, err := ParseConversations([]byte(`[{"session_2_date_time":"10:00 am on 1 Jan, 2025","session_2":[{"speaker":"a","dia_id":"D2:1","text":"hi"}]}]`))
	if err != nil || len(got) != 1 || got[0].ID != "conv-1" || got[0].Sessions[0].N != 2 {
		t.Fatalf("%+v %v", got, err)
	}
}

func FuzzParseConversations(f *testing.F) {
	if b, err := os.ReadFile("testdata/conversation.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`[{"session_1_date_time":"2026-01-02","session_1":[{"speaker":"a","dia_id":"D1:1","text":"x"}],"qa":[{"question":"q","evidence":["D1:1"]}]}]`))
	f.Add([]byte(`{"conversation":{"session_01_date_time":"1:00 pm on 9 May, 2023"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ParseConversations(data)
		if err != nil {
			if !errors.Is(err, ErrConversation) {
				t.Fatalf("error does not wrap ErrConversation: %v", err)
			}
			return
		}
		for _, c := range cs {
			for _, s := range c.Sessions {
				if s.Date.IsZero() {
					t.Fatalf("session %d without a date", s.N)
				}
				for _, tu := range s.Turns {
					if tu.DiaID == "" {
						t.Fatal("turn without dia_id")
					}
				}
			}
		}
	})
}
