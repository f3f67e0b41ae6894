package metrics

import "github.com/prometheus/client_golang/prometheus"

// ServerStats are a native server's counters (server/native.Stats, mapped
// by the serve command: this package does not import the server).
type ServerStats struct {
	DatagramsIn, DatagramsOut int
	GameSpy                   int
	Joined                    int
	Boots                     int
	ChecksumFailures          int
	Relayed                   int
	Refused                   int
	Retransmits               int
	Dropped                   map[string]int // by reason
}

// Server collects a native server's metrics, read at scrape time.
type Server struct {
	Stats func() ServerStats
}

var (
	descSrvDatagrams = desc("server_datagrams_total", "Datagrams the server received (in) and sent (out).", "dir")
	descSrvGameSpy   = desc("server_gamespy_queries_total", "GameSpy queries the server answered.")
	descSrvJoins     = desc("server_joins_total", "Clients that reached the game.")
	descSrvBoots     = desc("server_boots_total", "Clients the server booted (full, kicked, checksum).")
	descSrvChecksum  = desc("server_checksum_failures_total", "Clients that failed the checksum exchange.")
	descSrvRelayed   = desc("server_relayed_messages_total", "Copies of client game messages forwarded to other clients.")
	descSrvRefused   = desc("server_refused_total", "Connects refused because the server was full.")
	descSrvRetx      = desc("server_retransmissions_total", "Reliable messages the server sent again.")
	descSrvDropped   = desc("server_dropped_datagrams_total", "Datagrams the server ignored, by reason.", "reason")
)

// Describe sends the metrics' descriptions.
func (s *Server) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSrvDatagrams, descSrvGameSpy, descSrvJoins, descSrvBoots,
		descSrvChecksum, descSrvRelayed, descSrvRefused, descSrvRetx, descSrvDropped} {
		ch <- d
	}
}

// Collect reads the server's counters.
func (s *Server) Collect(ch chan<- prometheus.Metric) {
	st := s.Stats()
	c := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	c(descSrvDatagrams, st.DatagramsIn, "in")
	c(descSrvDatagrams, st.DatagramsOut, "out")
	c(descSrvGameSpy, st.GameSpy)
	c(descSrvJoins, st.Joined)
	c(descSrvBoots, st.Boots)
	c(descSrvChecksum, st.ChecksumFailures)
	c(descSrvRelayed, st.Relayed)
	c(descSrvRefused, st.Refused)
	c(descSrvRetx, st.Retransmits)
	for reason, n := range st.Dropped {
		c(descSrvDropped, n, reason)
	}
}
