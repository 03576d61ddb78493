package cancel

import (
	"context"
	"testing"
)

func TestDone(t *testing.T) {
	if Done(nil) {
		t.Fatal("nil channel reported done")
	}
	ctx, cancel := context.WithCancel(context.Background())
	if Done(ctx.Done()) {
		t.Fatal("live context reported done")
	}
	cancel()
	if !Done(ctx.Done()) {
		t.Fatal("cancelled context not reported done")
	}
}
