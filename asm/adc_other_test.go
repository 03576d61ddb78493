//go:build !(amd64 && gc && !noasm && !purego)

package asm

func ktADCVariants() []ktADCVariant { return nil }
