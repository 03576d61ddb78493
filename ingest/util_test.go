package ingest

import "strconv"

func fmtInt(i int) string { return strconv.Itoa(i) }
