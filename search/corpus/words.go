package corpus

import "strings"

func w(s string) []string { return strings.Fields(s) }
