package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Endpoint serves /metrics in the Prometheus text format.
type Endpoint struct {
	ln  net.Listener
	srv *http.Server
	err chan error
}

// Listen starts serving the collectors, plus the Go runtime's and the
// process's own (CPU, memory, open files), on addr (host:port).
func Listen(addr string, cs ...prometheus.Collector) (*Endpoint, error) {
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
	e := &Endpoint{ln: ln, err: make(chan error, 1),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { e.err <- e.srv.Serve(ln) }()
	return e, nil
}

// Addr is the address it listens on.
func (e *Endpoint) Addr() net.Addr { return e.ln.Addr() }

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
