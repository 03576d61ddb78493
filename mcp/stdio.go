package mcp

import (
	"bufio"
	"context"
	"io"
	"os"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdioLine bounds one inbound stdio message.
const maxStdioLine = 16 << 20

// RunStdio serves MCP over the process's stdin and stdout as
// Options.Principal (an admin when Options.Admin) until the client closes the stream or ctx is done.
func (s *Server) RunStdio(ctx context.Context) error {
	return s.serveStream(ctx, os.Stdin, os.Stdout)
}

// serveStream serves newline-delimited JSON-RPC on r and w. A line that is
// not JSON (or is longer than maxStdioLine) is answered with JSON-RPC's
// parse error (-32700, id null), and one nested deeper than the SDK
// decodes with an invalid-request error (inboundReply); either is skipped,
// as the protocol asks, where the SDK's stream transport would end the
// session on it.
func (s *Server) serveStream(ctx context.Context, r io.Reader, w io.Writer) error {
	lw := &lockedWriter{w: w}
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		var line []byte
		tooLong := false
		for {
			chunk, err := br.ReadSlice('\n')
			if len(line)+len(chunk) > maxStdioLine {
				tooLong, line = true, line[:0]
			} else if !tooLong {
				line = append(line, chunk...)
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if len(line) > 0 || tooLong {
				trimmed := trimSpace(line)
				if tooLong {
					lw.Write([]byte(parseErrorReply))
				} else if reply := inboundReply(trimmed); len(trimmed) > 0 && reply != nil {
					lw.Write(reply)
				} else if len(trimmed) > 0 {
					if _, werr := pw.Write(append(trimmed, '\n')); werr != nil {
						return
					}
				}
			}
			line, tooLong = line[:0], false
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	defer pr.Close()
	return s.SDKServer(Caller{Principal: s.o.Principal, Admin: s.o.Admin}).Run(ctx, &sdk.IOTransport{Reader: pr, Writer: nopCloser{lw}})
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// lockedWriter serialises the SDK's messages and the parse errors.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
