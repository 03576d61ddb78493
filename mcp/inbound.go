package mcp

import (
	"bytes"
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
// to answer with. Text that is not JSON gets the parse error (-32700, id
// null). Valid JSON that the SDK's decoder refuses gets an invalid-request
// error (-32600), carrying the message's id when it has a valid one: JSON
// nested deeper than maxMessageDepth, a batch (an array: the revisions
// served have no batching), anything but an object, a "jsonrpc" member
// other than "2.0", an id that is not a string or a 64-bit integer, a
// method that is not a string, a message that is neither a request nor a
// response, or a response whose error is not {code, message}.
func inboundReply(msg []byte) []byte {
	if !json.Valid(msg) {
		return []byte(parseErrorReply)
	}
	if jsonDepth(msg) > maxMessageDepth {
		return invalidRequest(msg, "the message nests objects and arrays deeper than "+strconv.Itoa(maxMessageDepth)+" levels")
	}
	var m map[string]json.RawMessage
	if msg[0] == '[' {
		return invalidRequest(nil, "batches are not supported; send one message at a time")
	}
	if json.Unmarshal(msg, &m) != nil || m == nil {
		return invalidRequest(nil, "a message must be a JSON object")
	}
	if v, ok := m["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return invalidRequest(msg, `"jsonrpc" must be "2.0"`)
	}
	if id, ok := m["id"]; ok && !validID(id) {
		return invalidRequest(nil, "id must be a string or an integer")
	}
	method, isReq := m["method"]
	if isReq {
		var name string
		if json.Unmarshal(method, &name) != nil {
			return invalidRequest(msg, "method must be a string")
		}
		return nil
	}
	_, hasResult := m["result"]
	e, hasError := m["error"]
	if _, hasID := m["id"]; !hasID || hasResult == hasError {
		return invalidRequest(msg, "a message must be a request (method) or a response (id with result or error)")
	}
	if hasError {
		var eo struct {
			Code    *int64  `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(e, &eo) != nil || eo.Code == nil || eo.Message == nil {
			return invalidRequest(msg, "a response's error must be an object with an integer code and a string message")
		}
	}
	return nil
}

// invalidRequest is JSON-RPC's invalid-request error (-32600) with reason,
// carrying msg's id when msg has a valid one (else id null).
func invalidRequest(msg []byte, reason string) []byte {
	id := "null"
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	if msg != nil && json.Unmarshal(msg, &head) == nil && validID(head.ID) {
		id = string(head.ID)
	}
	r, _ := json.Marshal("Invalid Request: " + reason)
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32600,"message":` + string(r) + `}}` + "\n")
}

// validID reports whether raw is a JSON-RPC id the SDK keeps as sent: a
// string, or an integer that fits in 64 bits (the SDK truncates a
// fraction, so an id of 1.5 would be answered as 1).
func validID(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return false
	}
	if raw[0] == '"' {
		var s string
		return json.Unmarshal(raw, &s) == nil
	}
	var n int64
	return json.Unmarshal(raw, &n) == nil
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
