package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Peer line protocol. A peer is a long-lived child process started as
//
//	DRIVER BASE.fvecs QUERIES.fvecs l2|ip M EFC K                         (HNSW peers)
//	DRIVER BASE.fvecs QUERIES.fvecs l2|ip M NLIST K NBITS KFACTOR RESIDUAL (IVF-PQ peers)
//
// It prints a hello line {"engine","version","n","nq","d"} and then answers
// each command read from stdin with one JSON line on stdout:
//
//	build         {"build_wall_s","build_cpu_s","rss_before_bytes","rss_after_bytes"}
//	              IVF-PQ peers add {"train_wall_s","train_cpu_s","add_wall_s",
//	              "add_cpu_s","bytes_per_vector","index_desc"}
//	search EF S   {"ef","reps","wall_s","cpu_s","ids":[nq·k ids, best first, -1 = none]}
//	              (EF is efSearch for HNSW peers, nprobe for IVF-PQ peers)
//	              (whole query set, one batch call per pass, one thread, passes
//	              repeated until S seconds have passed; ids of the first pass)
//	quit
//
// An {"error": "..."} reply is an error. Keeping the peers alive lets the
// harness alternate engines point by point (see annSuite), so load from
// other processes on a shared machine spreads over all engines alike.
// Drivers: bench/peers/ann/hnswlib_server.cc (C++), py_server.py (FAISS,
// Debian hnswlib), usearch_server.js (Node).

type peerHello struct {
	Engine  string `json:"engine"`
	Version string `json:"version"`
	N       int    `json:"n"`
	NQ      int    `json:"nq"`
	D       int    `json:"d"`
	Error   string `json:"error"`
}

type peerBuild struct {
	WallS     float64 `json:"build_wall_s"`
	CPUS      float64 `json:"build_cpu_s"`
	RSSBefore int64   `json:"rss_before_bytes"`
	RSSAfter  int64   `json:"rss_after_bytes"`
	// IVF-PQ peers only.
	TrainWallS     float64 `json:"train_wall_s"`
	TrainCPUS      float64 `json:"train_cpu_s"`
	AddWallS       float64 `json:"add_wall_s"`
	AddCPUS        float64 `json:"add_cpu_s"`
	BytesPerVector float64 `json:"bytes_per_vector"`
	IndexDesc      string  `json:"index_desc"`
	Error          string  `json:"error"`
}

type peerSearch struct {
	Ef    int     `json:"ef"`
	Reps  int     `json:"reps"`
	WallS float64 `json:"wall_s"`
	CPUS  float64 `json:"cpu_s"`
	IDs   []int64 `json:"ids"`
	Error string  `json:"error"`
}

type peerProc struct {
	name   string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *syncBuffer
	hello  peerHello
	driver string

	waitOnce sync.Once
	exited   chan struct{} // closed when cmd.Wait returned
}

// wait waits up to timeout for the process to exit (and exec to finish
// copying its stderr); it reports whether it did.
func (p *peerProc) wait(timeout time.Duration) bool {
	p.waitOnce.Do(func() {
		go func() { p.cmd.Wait(); close(p.exited) }()
	})
	select {
	case <-p.exited:
		return true
	case <-time.After(timeout):
		return false
	}
}

// startPeer starts argv and reads its hello line.
func startPeer(name string, argv []string, env []string) (*peerProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	errb := &syncBuffer{}
	cmd.Stderr = errb
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: peer %s: %w", name, err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bench: peer %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: peer %s missing or not runnable (%s): %w", name, strings.Join(argv, " "), err)
	}
	p := &peerProc{name: name, cmd: cmd, in: in, out: bufio.NewReaderSize(outp, 1<<20), stderr: errb, driver: strings.Join(argv, " "), exited: make(chan struct{})}
	if err := p.read(&p.hello); err != nil {
		p.kill()
		return nil, err
	}
	if p.hello.Engine != name {
		p.kill()
		return nil, fmt.Errorf("bench: peer %s introduced itself as %q", name, p.hello.Engine)
	}
	return p, nil
}

func (p *peerProc) read(v any) error {
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		p.wait(2 * time.Second) // let exec finish copying stderr
		return fmt.Errorf("bench: peer %s: reading reply: %v (stderr: %s)", p.name, err, strings.TrimSpace(p.stderr.String()))
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("bench: peer %s: bad reply %.200q: %v", p.name, line, err)
	}
	return nil
}

func (p *peerProc) call(cmd string, v any) error {
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		return fmt.Errorf("bench: peer %s: %v (stderr: %s)", p.name, err, strings.TrimSpace(p.stderr.String()))
	}
	return p.read(v)
}

func (p *peerProc) build() (peerBuild, error) {
	var b peerBuild
	if err := p.call("build", &b); err != nil {
		return b, err
	}
	if b.Error != "" {
		return b, fmt.Errorf("bench: peer %s: build: %s", p.name, b.Error)
	}
	return b, nil
}

func (p *peerProc) search(ef int, minTime time.Duration, nq, k int) (peerSearch, error) {
	var s peerSearch
	if err := p.call(fmt.Sprintf("search %d %g", ef, minTime.Seconds()), &s); err != nil {
		return s, err
	}
	if s.Error != "" {
		return s, fmt.Errorf("bench: peer %s: search: %s", p.name, s.Error)
	}
	if s.Ef != ef || s.Reps < 1 || s.WallS <= 0 || len(s.IDs) != nq*k {
		return s, fmt.Errorf("bench: peer %s: search ef=%d: bad reply (ef %d, reps %d, wall %g s, %d ids, want %d)", p.name, ef, s.Ef, s.Reps, s.WallS, len(s.IDs), nq*k)
	}
	return s, nil
}

func (p *peerProc) close() {
	fmt.Fprintln(p.in, "quit")
	p.in.Close()
	if !p.wait(10 * time.Second) {
		p.kill()
	}
}

func (p *peerProc) kill() {
	p.cmd.Process.Kill()
	p.wait(10 * time.Second)
}

// syncBuffer collects a child's stderr; exec copies into it from its own
// goroutine while error paths read it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 64<<10 { // keep the first 64 KiB
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
