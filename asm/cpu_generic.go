//go:build !((amd64 || arm64) && gc && !noasm && !purego)

package asm

func detectLevels() []Level { return []Level{Generic} }
