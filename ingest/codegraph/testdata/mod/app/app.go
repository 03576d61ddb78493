// Package app uses the store.
package app

import "example.com/mod/store"

// apply is called through a function value.
var apply = func(s *store.Store, v string) bool { return s.Put(v) }

// Run stores every value.
func Run(vs []string) int {
	s := store.New(store.Raw{})
	n := 0
	for _, v := range vs {
		if apply(s, v) {
			n++
		}
	}
	store.Limit++
	return n
}
