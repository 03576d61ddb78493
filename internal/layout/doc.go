// Package layout holds the test that keeps the package floors of DESIGN.md
// true: a package imports only packages on its own floor or below.
package layout
