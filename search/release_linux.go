//go:build linux

package search

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// releaseMappedPages drops this process's resident pages of the segment
// files under dir (Bleve maps them read-only and shared). Building the
// text and facet tables reads every posting once; afterwards relevance
// queries read the tables, and only stored fields of page hits and the
// postings of sorted listings are read from the files again. Dropping the
// pages from the process's page tables frees nothing the kernel could not
// reclaim anyway, but keeps the resident set to what queries use: the
// pages stay in the page cache and fault back in, from memory, when read.
func releaseMappedPages(dir string) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return
	}
	defer f.Close()
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// address perms offset dev inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || !strings.HasPrefix(fields[5], prefix) || !strings.HasSuffix(fields[5], ".zap") || fields[1] != "r--s" {
			continue
		}
		from, to, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(start), uintptr(end-start), syscall.MADV_DONTNEED)
	}
}
