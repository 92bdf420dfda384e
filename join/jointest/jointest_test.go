package jointest

import (
	"context"
	"testing"
)

func TestWithFrom(t *testing.T) {
	if o := From(context.Background()); o.Protocol != 0 || o.NoHashReports || o.Codecs != nil {
		t.Fatalf("no options: %+v, want the zero value", o)
	}
	want := Options{Protocol: 9, NoHashReports: true}
	ctx, cancel := context.WithCancel(With(context.Background(), want))
	defer cancel()
	if o := From(ctx); o.Protocol != 9 || !o.NoHashReports {
		t.Fatalf("got %+v through a derived context, want %+v", o, want)
	}
}
