package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Conversation is a conversation log: sessions of turns, with the
// questions asked about it.
//
// JSON form (the LoCoMo layout): one object, or an array of them,
//
//	{"sample_id": "conv-1",
//	 "conversation": {"speaker_a": "Ann", "speaker_b": "Bo",
//	   "session_1_date_time": "1:56 pm on 8 May, 2023",
//	   "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "…"}, …], …},
//	 "qa": [{"question": "…", "answer": "…", "evidence": ["D1:1"]}, …]}
//
// The session keys may also sit at the top level (no "conversation"
// object). Dates: "3:04 pm on 2 January, 2006" (also "Jan"), RFC 3339,
// "2006-01-02 15:04" or "2006-01-02", UTC.
type Conversation struct {
	ID       string
	Sessions []Session
	QA       []QA
}

// Session is one dated session.
type Session struct {
	N     int
	Date  time.Time
	Turns []Turn
}

// Turn is one utterance.
type Turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
}

// QA is one question with its answer and evidence turn ids.
type QA struct {
	Question string          `json:"question"`
	Answer   json.RawMessage `json:"answer,omitempty"`
	Evidence []string        `json:"evidence"`
	Category json.RawMessage `json:"category,omitempty"`
}

// ErrConversation wraps every conversation decoding error.
var ErrConversation = errors.New("memory: bad conversation")

var sessionKey = regexp.MustCompile(`^session_([0-9]{1,6})(_date_time)?$`)

var dateLayouts = []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006", time.RFC3339, "2006-01-02 15:04", "2006-01-02"}

// ParseConversationDate parses a session date in one of the accepted
// layouts.
func ParseConversationDate(s string) (time.Time, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.UTC(), nil
		}
		if t, err := time.Parse(l, strings.TrimSpace(s)); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: date %q: want e.g. \"1:56 pm on 8 May, 2023\" or RFC 3339", ErrConversation, s)
}

// ParseConversations decodes one conversation object or an array of them.
// Errors wrap ErrConversation and name the conversation index and key.
func ParseConversations(data []byte) ([]Conversation, error) {
	data = bytes.TrimSpace(data)
	var raws []json.RawMessage
	if len(data) > 0 && data[0] == '[' {
		if err := json.Unmarshal(data, &raws); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConversation, err)
		}
	} else {
		raws = []json.RawMessage{data}
	}
	out := make([]Conversation, 0, len(raws))
	for i, raw := range raws {
		c, err := parseConversation(raw)
		if err != nil {
			return nil, fmt.Errorf("conversation %d: %w", i, err)
		}
		if c.ID == "" {
			c.ID = "conv-" + strconv.Itoa(i+1)
		}
		out = append(out, c)
	}
	return out, nil
}

func parseConversation(raw json.RawMessage) (Conversation, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		return Conversation{}, fmt.Errorf("%w: want a JSON object", ErrConversation)
	}
	var c Conversation
	if v, ok := top["sample_id"]; ok {
		if err := json.Unmarshal(v, &c.ID); err != nil {
			var n json.Number
			if json.Unmarshal(v, &n) != nil {
				return c, fmt.Errorf("%w: sample_id: want a string", ErrConversation)
			}
			c.ID = n.String()
		}
	}
	sessions := top
	if v, ok := top["conversation"]; ok {
		sessions = nil
		if err := json.Unmarshal(v, &sessions); err != nil || sessions == nil {
			return c, fmt.Errorf("%w: conversation: want an object", ErrConversation)
		}
	}
	byN := map[int]*Session{}
	get := func(n int) *Session {
		if byN[n] == nil {
			byN[n] = &Session{N: n}
		}
		return byN[n]
	}
	dated := map[int]bool{}
	for k, v := range sessions {
		m := sessionKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if m[2] != "" {
			var ds string
			if err := json.Unmarshal(v, &ds); err != nil {
				return c, fmt.Errorf("%w: %s: want a string", ErrConversation, k)
			}
			t, err := ParseConversationDate(ds)
			if err != nil {
				return c, fmt.Errorf("%s: %w", k, err)
			}
			get(n).Date = t
			dated[n] = true
			continue
		}
		var turns []Turn
		if err := json.Unmarshal(v, &turns); err != nil {
			return c, fmt.Errorf("%w: %s: want an array of {speaker, dia_id, text}", ErrConversation, k)
		}
		for j, t := range turns {
			if t.DiaID == "" || strings.TrimSpace(t.Text) == "" {
				return c, fmt.Errorf("%w: %s[%d]: dia_id and text are required", ErrConversation, k, j)
			}
		}
		get(n).Turns = turns
	}
	seen := map[string]bool{}
	for n, s := range byN {
		if !dated[n] {
			return c, fmt.Errorf("%w: session_%d has no session_%d_date_time", ErrConversation, n, n)
		}
		for _, t := range s.Turns {
			if seen[t.DiaID] {
				return c, fmt.Errorf("%w: dia_id %q repeated", ErrConversation, t.DiaID)
			}
			seen[t.DiaID] = true
		}
		c.Sessions = append(c.Sessions, *s)
	}
	slices.SortFunc(c.Sessions, func(a, b Session) int { return a.N - b.N })
	if v, ok := top["qa"]; ok {
		if err := json.Unmarshal(v, &c.QA); err != nil {
			return c, fmt.Errorf("%w: qa: want an array of {question, answer, evidence}", ErrConversation)
		}
	}
	return c, nil
}

// IngestOptions configures IngestConversation.
type IngestOptions struct {
	// Window is the number of consecutive turns per episodic record
	// (default 1: one record per turn).
	Window int
}

// IngestConversation writes c's turns as episodic records of subject: one
// record per Window consecutive turns of a session, content "Speaker:
// text" lines, provenance "conv:<id>#<first dia_id>" (…"..<last>" for a
// window), ValidFrom = the session's date plus one second per turn (the
// order within the session), evidence observed. It returns the record id
// of every dia_id.
func (s *Store) IngestConversation(ctx context.Context, subject string, c Conversation, o IngestOptions) (map[string]string, error) {
	if o.Window <= 0 {
		o.Window = 1
	}
	var ws []Write
	var diaOf [][]string
	for _, sess := range c.Sessions {
		for i := 0; i < len(sess.Turns); i += o.Window {
			win := sess.Turns[i:min(i+o.Window, len(sess.Turns))]
			var b strings.Builder
			var ids []string
			for j, t := range win {
				if j > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(t.Speaker + ": " + t.Text)
				ids = append(ids, t.DiaID)
			}
			prov := "conv:" + c.ID + "#" + ids[0]
			if len(ids) > 1 {
				prov += ".." + ids[len(ids)-1]
			}
			ws = append(ws, Write{Subject: subject, Kind: Episode, Content: b.String(), Provenance: prov,
				Evidence: Observed, ValidFrom: sess.Date.Add(time.Duration(i) * time.Second)})
			diaOf = append(diaOf, ids)
		}
	}
	out, err := s.Remember(ctx, ws)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for i, o := range out {
		if o.Record == nil {
			continue
		}
		for _, d := range diaOf[i] {
			m[d] = o.Record.ID
		}
	}
	return m, nil
}

// EvidenceRecall is the mean, over c's questions with evidence, of the
// fraction of evidence turns whose record is among the top k of a recall
// of the question (History: every valid time, since a question about the
// past asks about then).
func (s *Store) EvidenceRecall(ctx context.Context, subject string, c Conversation, ids map[string]string, k int) (float64, int, error) {
	sum, n := 0.0, 0
	for _, qa := range c.QA {
		if len(qa.Evidence) == 0 {
			continue
		}
		res, err := s.Recall(ctx, Query{Subject: subject, Text: qa.Question, TopK: k, History: true})
		if err != nil {
			return 0, 0, err
		}
		got := map[string]bool{}
		for _, h := range res.Hits {
			got[h.Record.ID] = true
		}
		found := 0
		for _, e := range qa.Evidence {
			if got[ids[e]] {
				found++
			}
		}
		sum += float64(found) / float64(len(qa.Evidence))
		n++
	}
	if n == 0 {
		return 0, 0, nil
	}
	return sum / float64(n), n, nil
}
