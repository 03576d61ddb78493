package bench

import (
	"slices"
	"strings"
	"testing"
)

// TestSelectPeers: Config.Peers keeps only the named drivers, in order;
// PeersAVX2 adds OPENBLAS_CORETYPE=Haswell to the Python peers only and
// builds hnswlib without AVX-512; an unknown peer name fails Validate.
func TestSelectPeers(t *testing.T) {
	all := []peerDriver{
		{name: PeerHnswlibNative, argv: []string{"/tmp/hnswlib_server"}},
		{name: PeerFAISSHNSW, argv: []string{systemPython, "py_server.py", PeerFAISSHNSW}, env: []string{"OMP_NUM_THREADS=1"}},
		{name: PeerFAISSFlat, argv: []string{systemPython, "py_server.py", PeerFAISSFlat}, flat: true},
	}
	got := selectPeers(Config{}, all)
	if len(got) != 3 {
		t.Fatalf("no filter: %d drivers, want 3", len(got))
	}
	got = selectPeers(Config{Peers: []string{PeerFAISSFlat, PeerHnswlibNative}}, all)
	if len(got) != 2 || got[0].name != PeerHnswlibNative || got[1].name != PeerFAISSFlat {
		t.Fatalf("filtered: %+v", got)
	}
	got = selectPeers(Config{PeersAVX2: true}, all)
	for _, pd := range got {
		has := slices.Contains(pd.env, "OPENBLAS_CORETYPE=Haswell")
		if has != (pd.argv[0] == systemPython) {
			t.Errorf("%s: env %v", pd.name, pd.env)
		}
	}
	if len(all[1].env) != 1 {
		t.Errorf("selectPeers changed the input's env: %v", all[1].env)
	}
	if f := strings.Join(hnswlibFlags(Config{PeersAVX2: true}), " "); f != "-march=native -mno-avx512f" {
		t.Errorf("hnswlib AVX2 flags %q", f)
	}
	if f := strings.Join(hnswlibFlags(Config{}), " "); f != "-march=native" {
		t.Errorf("hnswlib flags %q", f)
	}
	if err := (Config{OutDir: "x", Peers: []string{"hnswlib"}}).Validate(); err == nil || !strings.Contains(err.Error(), `unknown peer "hnswlib"`) {
		t.Errorf("Validate with an unknown peer: %v", err)
	}
	if err := (Config{OutDir: "x", Peers: []string{PeerFAISSAVX2IVFPQ4, PeerFAISSAVX2Flat}}).Validate(); err != nil {
		t.Errorf("Validate with the strong peers: %v", err)
	}
	strong := []peerDriver{{name: PeerFAISSAVX2HNSW, argv: []string{"/x/faiss_server"}}, {name: PeerFAISSAVX2Flat, argv: []string{"/x/faiss_server"}}}
	if got := selectPeers(Config{Peers: []string{PeerFAISSAVX2Flat}, PeersAVX2: true}, strong); len(got) != 1 || got[0].name != PeerFAISSAVX2Flat ||
		!slices.Contains(got[0].env, "OPENBLAS_CORETYPE=Haswell") {
		t.Errorf("selectPeers over the strong peers: %+v", got)
	}
	if err := (Config{OutDir: "x", Peers: []string{PeerHnswlibNative, PeerFAISSFlat}}).Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}
