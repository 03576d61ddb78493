package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/stratasearch/strata/engine"
	"github.com/stratasearch/strata/engine/remote"
	"github.com/stratasearch/strata/server"
	"github.com/stratasearch/strata/vfs/objstore"
)

// objectStoreFlags are serve's object-store flags (engine/remote). The
// endpoint and credentials come from the environment
// (objstore.ConfigFromEnv: STRATA_S3_ENDPOINT, STRATA_S3_ACCESS_KEY,
// STRATA_S3_SECRET_KEY, or the AWS_* names).
type objectStoreFlags struct {
	url        *string
	cacheDir   *string
	cacheBytes *int64
	readOnly   *bool
	poll       *time.Duration
	publish    *time.Duration
	leaseTTL   *time.Duration
	grace      *time.Duration
}

func addObjectStoreFlags(fl *flag.FlagSet) *objectStoreFlags {
	return &objectStoreFlags{
		url:        fl.String("object-store", "", "s3://bucket/prefix: with --read-only, serve the newest manifest published there; without, publish --data there (the WAL stays local)"),
		cacheDir:   fl.String("cache-dir", "", "reader: local cache directory for objects and open versions (required with --read-only)"),
		cacheBytes: fl.Int64("cache-bytes", 1<<30, "reader: bound in bytes of cached objects no served version uses (LRU)"),
		readOnly:   fl.Bool("read-only", false, "serve --object-store as a stateless read-only replica (searches only)"),
		poll:       fl.Duration("poll-interval", time.Second, "reader: how often to look for a new manifest (SIGHUP: now)"),
		publish:    fl.Duration("publish-interval", time.Second, "writer: how often to publish flushed state"),
		leaseTTL:   fl.Duration("lease-ttl", 10*time.Second, "writer: lease time-to-live"),
		grace:      fl.Duration("gc-grace", time.Minute, "writer: how long unreferenced objects and old manifests are kept for readers"),
	}
}

func (f *objectStoreFlags) store() (*objstore.Store, error) {
	c, err := objstore.ConfigFromEnv(*f.url)
	if err != nil {
		return nil, err
	}
	return objstore.New(c)
}

// serveReplica is `searchd serve --object-store URL --read-only`: a
// remote.Reader whose views each get a server.Server (their own
// DataDir inside the cache), behind the reader's read-only front.
func serveReplica(ctx context.Context, ln net.Listener, f *objectStoreFlags, o server.Options, logger *slog.Logger) error {
	if *f.cacheDir == "" {
		return errors.New("serve: --read-only needs --cache-dir")
	}
	st, err := f.store()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ro := remote.ReaderOptions{CacheDir: *f.cacheDir, CacheBytes: *f.cacheBytes, Engine: o.Engine,
		Logf: func(format string, a ...any) { logger.Warn(fmt.Sprintf(format, a...)) },
		NewHandler: func(db *engine.DB, dir string) (http.Handler, io.Closer, error) {
			so := o
			so.DataDir = dir
			s, err := server.New(db, so)
			if err != nil {
				return nil, nil, err
			}
			return s, closerFunc(func() error { s.Close(); return nil }), nil
		}}
	r, err := remote.OpenReader(ctx, st, ro)
	if err != nil {
		logger.Error("searchd serve: object store", "url", st.URL(), "err", err)
	}
	if r == nil {
		return err
	}
	defer r.Close()
	go r.Run(ctx, *f.poll)
	// SIGHUP: look for a new manifest now.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				if _, err := r.Refresh(ctx); err != nil {
					logger.Warn("searchd serve: refresh on SIGHUP", "err", err)
				}
			}
		}
	}()
	hs := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	s := r.Status()
	logger.Info("searchd serve: read-only replica", "addr", ln.Addr().String(), "object_store", st.URL(),
		"version", s.Version, "degraded", s.Degraded)
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// publisher returns the server setup function of a writer that
// publishes the DB to --object-store (remote.Writer.Run) until the
// server stops or the writer loses its lease.
func (f *objectStoreFlags) publisher(ctx context.Context, logger *slog.Logger) func(*server.Server) error {
	return func(s *server.Server) error {
		st, err := f.store()
		if err != nil {
			return err
		}
		// A lease still held (by a writer that died, or one shutting
		// down) is waited for, up to twice its TTL.
		var w *remote.Writer
		deadline := time.Now().Add(2 * *f.leaseTTL)
		for {
			w, err = remote.OpenWriter(ctx, st, s.DB(), remote.WriterOptions{LeaseTTL: *f.leaseTTL, Grace: *f.grace})
			if !errors.Is(err, remote.ErrLeaseHeld) || time.Now().After(deadline) {
				break
			}
			logger.Warn("searchd serve: waiting for the object-store lease", "err", err)
			time.Sleep(*f.leaseTTL / 4)
		}
		if err != nil {
			return fmt.Errorf("serve: --object-store: %w", err)
		}
		logger.Info("searchd serve: publishing", "object_store", st.URL(), "version", w.Version())
		go func() {
			err := w.Run(ctx, *f.publish, func(format string, a ...any) { logger.Warn(fmt.Sprintf(format, a...)) })
			if !errors.Is(err, context.Canceled) {
				logger.Error("searchd serve: publishing stopped", "err", err)
			}
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			w.Close(cctx)
		}()
		return nil
	}
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
