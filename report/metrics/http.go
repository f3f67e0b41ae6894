package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Limits bound what clients of the endpoint can make it hold. Zero fields
// take the defaults, which a Prometheus scrape (one connection, a request
// every 15s-1m, a reply of some tens of KiB) never reaches.
type Limits struct {
	ReadHeader time.Duration // to read a request's header (5s)
	Read       time.Duration // to read a whole request (10s)
	Write      time.Duration // to write a reply, from the end of the request's header (10s)
	Idle       time.Duration // a kept-alive connection waiting for its next request (30s)
	// MaxConns is the most connections at once (64): one more takes the
	// place of the connection idle longest, or, when none is idle, is
	// closed at once.
	MaxConns int
}

func (l Limits) withDefaults() Limits {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&l.ReadHeader, 5*time.Second)
	def(&l.Read, 10*time.Second)
	def(&l.Write, 10*time.Second)
	def(&l.Idle, 30*time.Second)
	if l.MaxConns <= 0 {
		l.MaxConns = 64
	}
	return l
}

// maxHeaderBytes bounds a request's header (a scrape's is a few hundred
// bytes).
const maxHeaderBytes = 8 << 10

// Endpoint serves /metrics in the Prometheus text format.
type Endpoint struct {
	ln  *capListener
	srv *http.Server
	err chan error
}

// Listen starts serving the collectors, plus the Go runtime's and the
// process's own (CPU, memory, open files), on addr (host:port), within the
// default Limits.
func Listen(addr string, cs ...prometheus.Collector) (*Endpoint, error) {
	return ListenWith(addr, Limits{}, cs...)
}

// ListenWith is Listen within lim.
func ListenWith(addr string, lim Limits, cs ...prometheus.Collector) (*Endpoint, error) {
	lim = lim.withDefaults()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	cl := &capListener{Listener: ln, max: int64(lim.MaxConns), idle: map[net.Conn]time.Time{}}
	e := &Endpoint{ln: cl, err: make(chan error, 1),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: lim.ReadHeader, ReadTimeout: lim.Read,
			WriteTimeout: lim.Write, IdleTimeout: lim.Idle, MaxHeaderBytes: maxHeaderBytes, ConnState: cl.state}}
	go func() { e.err <- e.srv.Serve(e.ln) }()
	return e, nil
}

// Addr is the address it listens on.
func (e *Endpoint) Addr() net.Addr { return e.ln.Addr() }

// Warning says, when the endpoint listens beyond loopback (":PORT" and
// "0.0.0.0:PORT" listen on every interface), that anyone who can reach
// the port can read the metrics; "" when it listens on loopback only.
func (e *Endpoint) Warning() string {
	a, ok := e.ln.Addr().(*net.TCPAddr)
	switch {
	case !ok || a.IP.IsLoopback():
		return ""
	case a.IP.IsUnspecified():
		return fmt.Sprintf("metrics endpoint %v listens on every interface: anyone who can reach port %d reads it (give 127.0.0.1:%d for this host only)", a, a.Port, a.Port)
	}
	return fmt.Sprintf("metrics endpoint %v listens beyond loopback: anyone who can reach it reads it", a)
}

// Refused is how many connections were closed at once for the connection
// cap; Displaced how many idle ones were closed to make room.
func (e *Endpoint) Refused() int64   { return e.ln.refused.Load() }
func (e *Endpoint) Displaced() int64 { return e.ln.displaced.Load() }

// Close stops serving, letting a scrape under way finish (up to 2 s).
func (e *Endpoint) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := e.srv.Shutdown(ctx)
	if serr := <-e.err; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// capListener holds at most max connections: one beyond takes the place
// of the connection idle longest (kept alive between requests), so that
// idle connections cannot keep a scrape out, or, when none is idle, is
// closed as soon as it is accepted: the client hears of it at once, and
// the descriptors held stay bounded (a listener that stops accepting
// leaves connections waiting in the kernel's queue instead).
type capListener struct {
	net.Listener
	max       int64
	open      atomic.Int64
	refused   atomic.Int64
	displaced atomic.Int64

	mu   sync.Mutex
	idle map[net.Conn]time.Time // since when, from http.Server's ConnState
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max && !l.closeIdlest() {
			l.open.Add(-1)
			l.refused.Add(1)
			c.Close()
			continue
		}
		return &cappedConn{Conn: c, l: l}, nil
	}
}

// state follows each connection's state, to know the idle ones.
func (l *capListener) state(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateIdle {
		l.idle[c] = time.Now()
	} else {
		delete(l.idle, c)
	}
}

// closeIdlest closes the connection idle longest and reports whether there
// was one; its place is the caller's.
func (l *capListener) closeIdlest() bool {
	l.mu.Lock()
	var oldest net.Conn
	var at time.Time
	for c, t := range l.idle {
		if oldest == nil || t.Before(at) {
			oldest, at = c, t
		}
	}
	delete(l.idle, oldest)
	l.mu.Unlock()
	if oldest == nil {
		return false
	}
	l.displaced.Add(1)
	oldest.(*cappedConn).release() // its place goes to the new connection now
	oldest.Close()
	return true
}

type cappedConn struct {
	net.Conn
	l    *capListener
	once sync.Once
}

func (c *cappedConn) release() { c.once.Do(func() { c.l.open.Add(-1) }) }

func (c *cappedConn) Close() error {
	c.release()
	return c.Conn.Close()
}
