package mcp

import (
	"encoding/json"
	"strconv"
)

// maxMessageDepth is the deepest nesting of objects and arrays the SDK
// decodes in a JSON-RPC message. A deeper message is valid JSON that the
// SDK refuses: over stdio its transport then ends the whole session, over
// HTTP it answers with a plain-text 400.
const maxMessageDepth = 1000

// parseErrorReply is JSON-RPC's parse error for a message that is not JSON.
const parseErrorReply = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n"

// inboundReply checks one inbound JSON-RPC message before the SDK sees it.
// It returns nil for a message the SDK can decode, else the JSON-RPC error
// to answer with: the parse error (-32700, id null) for text that is not
// JSON, and an invalid-request error (-32600) carrying the message's id,
// when it has one, for JSON nested deeper than maxMessageDepth.
func inboundReply(msg []byte) []byte {
	if !json.Valid(msg) {
		return []byte(parseErrorReply)
	}
	if jsonDepth(msg) <= maxMessageDepth {
		return nil
	}
	id := "null"
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &head) == nil && validID(head.ID) {
		id = string(head.ID)
	}
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":"Invalid Request: the message nests objects and arrays deeper than ` +
		strconv.Itoa(maxMessageDepth) + ` levels"}}` + "\n")
}

// validID reports whether raw is a JSON-RPC id: a string or a number.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// jsonDepth returns the deepest nesting of objects and arrays in valid
// JSON msg (strings skipped).
func jsonDepth(msg []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range msg {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}
