package datasets

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ModulePath is the Go module whose root anchors the default dataset path.
const ModulePath = "github.com/stratasearch/strata"

// Dir returns the directory holding the small real test collections
// (cranfield/, vaswani/): $STRATA_DATASETS if set, else ../shared/datasets
// relative to the module root. The module root is found by walking up from
// the working directory to the first directory whose go.mod declares
// ModulePath. Dir returns an error if the directory does not exist.
//
// Skip policy for tests that need real data: call Dir(); on error, t.Skip
// unless os.Getenv("CI") == "true", in which case t.Fatal. CI must never
// silently skip real-data tests.
func Dir() (string, error) {
	if d := os.Getenv("STRATA_DATASETS"); d != "" {
		if err := isDir(d); err != nil {
			return "", fmt.Errorf("datasets: $STRATA_DATASETS: %w", err)
		}
		return d, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	d := filepath.Join(root, "..", "shared", "datasets")
	if err := isDir(d); err != nil {
		return "", fmt.Errorf("datasets: no dataset directory (set STRATA_DATASETS): %w", err)
	}
	return filepath.Clean(d), nil
}

func isDir(d string) error {
	fi, err := os.Stat(d)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", d)
	}
	return nil
}

// ModuleRoot walks up from the working directory and returns the first
// directory containing a go.mod whose module line is ModulePath.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("datasets: %w", err)
	}
	for d := wd; ; {
		if modulePathOf(filepath.Join(d, "go.mod")) == ModulePath {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("datasets: module root of " + ModulePath + " not found above " + wd)
		}
		d = parent
	}
}

func modulePathOf(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// CacheDir returns the cache directory for fetched sources, converted
// vector files and ground truth: $STRATA_CACHE if set, else
// ~/.cache/strata. It is created (mode 0755) if missing.
func CacheDir() (string, error) {
	d := os.Getenv("STRATA_CACHE")
	if d == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("datasets: cache dir: %w", err)
		}
		d = filepath.Join(home, ".cache", "strata")
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("datasets: cache dir: %w", err)
	}
	return d, nil
}
