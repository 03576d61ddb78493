//go:build !((amd64 || arm64) && gc && !noasm && !purego)

package asm

func ktU8Variants() []ktU8Variant { return nil }
