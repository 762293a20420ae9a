package fetch

import (
	"context"
	"net/http/httptrace"
	"sync/atomic"
)

// phase is how far one request got; it turns a bare deadline error into
// "timeout during connect" versus "waiting for headers" versus "reading the
// body" (B.18, B.19).
type phase int32

const (
	phaseConnect phase = iota
	phaseTLS
	phaseRequest
	phaseBody
)

// hopState follows one request through the transport.
type hopState struct {
	phase     atomic.Int32
	conn      atomic.Pointer[countingConn]
	readStart atomic.Int64
}

type hopKey struct{}

func setPhase(ctx context.Context, p phase) {
	if s, ok := ctx.Value(hopKey{}).(*hopState); ok {
		s.phase.Store(int32(p))
	}
}

// withHop attaches a hopState and the trace hooks that fill it.
func withHop(ctx context.Context) (context.Context, *hopState) {
	s := &hopState{}
	ctx = context.WithValue(ctx, hopKey{}, s)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if cc, ok := info.Conn.(*countingConn); ok {
				s.readStart.Store(cc.read.Load())
				s.conn.Store(cc)
			}
			s.phase.Store(int32(phaseRequest))
		},
	})
	return ctx, s
}

// responseBytes is what was read on the connection since it was handed to
// this request: the response so far (HTTP/1.1 carries one at a time).
func (s *hopState) responseBytes() int64 {
	cc := s.conn.Load()
	if cc == nil {
		return 0
	}
	return cc.read.Load() - s.readStart.Load()
}
