module github.com/stratasearch/strata

go 1.26

require (
	github.com/RoaringBitmap/roaring/v2 v2.30.0 // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/klauspost/cpuid/v2 v2.4.2 // indirect
	github.com/kljensen/snowball v0.10.0 // indirect
	github.com/mschoch/smat v0.2.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
