package registry

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
)

// DefaultOwner is hostname/pid/random: unique per process, readable in the
// database when an operator wonders who holds a lease (ClaimDue,
// ClaimProbes).
func DefaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "cardex"
	}
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}
