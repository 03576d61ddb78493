// Package s3gw runs a real S3 server for tests: versitygw (Apache-2.0)
// with its posix backend over a temporary directory, listening on a
// loopback port. scripts/versitygw.sh installs the pinned version
// (v1.8.0, whose posix backend evaluates If-None-Match / If-Match under a
// per-key publish lock, so conditional writes are atomic) into
// $STRATA_CACHE/versitygw-v1.8.0/ (default ~/.cache/strata).
//
// The binary is found at $STRATA_VERSITYGW, else that cache path, else
// versitygw on $PATH. When none exists Start skips the test, except under
// CI=true, where it fails it: CI must run the object-store tests.
package s3gw

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Version is the pinned versitygw release.
const Version = "v1.8.0"

// Credentials the gateway is started with.
const (
	AccessKey = "strata-test-access"
	SecretKey = "strata-test-secret-key-0123456789"
)

// Binary returns the versitygw binary path, or "" when none is installed.
func Binary() string {
	if p := os.Getenv("STRATA_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	cache := os.Getenv("STRATA_CACHE")
	if cache == "" {
		if h, err := os.UserHomeDir(); err == nil {
			cache = filepath.Join(h, ".cache", "strata")
		}
	}
	if cache != "" {
		p := filepath.Join(cache, "versitygw-"+Version, "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	return ""
}

// Gateway is a running versitygw. Stop and Restart it to simulate an
// outage; the data directory and port survive a restart.
type Gateway struct {
	// Endpoint is host:port on loopback.
	Endpoint string
	// Root is the posix backend's directory (one subdirectory per bucket).
	Root string

	bin string
	mu  sync.Mutex
	cmd *exec.Cmd
	out *bytes.Buffer
}

// Start starts a gateway for t and stops it at cleanup. See the package
// doc for when it skips or fails.
func Start(t testing.TB) *Gateway {
	t.Helper()
	bin := Binary()
	if bin == "" {
		msg := "versitygw " + Version + " not installed (scripts/versitygw.sh installs it)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	g, err := StartAt(bin, t.TempDir())
	if err != nil {
		t.Fatalf("start versitygw: %v", err)
	}
	t.Cleanup(g.Stop)
	return g
}

// StartAt starts the versitygw binary bin over the posix directory root
// on a free loopback port (outside tests: benchmarks). Stop it when done.
func StartAt(bin, root string) (*Gateway, error) {
	g := &Gateway{Root: root, bin: bin}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var port int
		if port, err = freePort(); err != nil {
			continue
		}
		g.Endpoint = fmt.Sprintf("127.0.0.1:%d", port)
		if err = g.start(); err == nil {
			return g, nil
		}
	}
	return nil, err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (g *Gateway) start() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cmd != nil {
		return nil
	}
	out := &bytes.Buffer{}
	cmd := exec.Command(g.bin, "--access", AccessKey, "--secret", SecretKey, "--port", g.Endpoint, "--quiet",
		"posix", g.Root)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", g.Endpoint, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			return fmt.Errorf("versitygw exited: %s", out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			return fmt.Errorf("versitygw did not listen on %s: %s", g.Endpoint, out.String())
		}
	}
	g.cmd, g.out = cmd, out
	go func() {
		<-exited
		g.mu.Lock()
		if g.cmd == cmd {
			g.cmd = nil
		}
		g.mu.Unlock()
	}()
	return nil
}

// Stop kills the gateway (SIGKILL) and waits until its port refuses
// connections. Stopping a stopped gateway does nothing.
func (g *Gateway) Stop() {
	g.mu.Lock()
	cmd := g.cmd
	g.cmd = nil
	g.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	for i := 0; i < 200; i++ {
		c, err := net.DialTimeout("tcp", g.Endpoint, 50*time.Millisecond)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
}

// Restart starts a stopped gateway again on the same port and directory.
func (g *Gateway) Restart() error {
	var err error
	for i := 0; i < 50; i++ { // the port may linger briefly
		if err = g.start(); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// Env returns the environment variables that point objstore.ConfigFromEnv
// (and searchd) at the gateway.
func (g *Gateway) Env() []string {
	return []string{"STRATA_S3_ENDPOINT=http://" + g.Endpoint, "STRATA_S3_ACCESS_KEY=" + AccessKey,
		"STRATA_S3_SECRET_KEY=" + SecretKey}
}
