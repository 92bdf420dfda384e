package coordserver

import (
	"github.com/lockhost/lockhost/transport/coord"
	"html/template"
	"net/http"
	"strings"
)

// page is the invite link's page: the host's browser player links, the
// first opened at once, or what to do when the host has none.
var page = template.Must(template.New("invite").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Join {{.Code}}</title>
{{if .Play}}<meta http-equiv="refresh" content="1; url={{index .Play 0}}">{{end}}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
</head><body>
<h1>Join {{.Code}}</h1>
{{if .Play}}<p>Opening the host's browser player&hellip; If nothing happens, try each link:</p>
<ul>{{range .Play}}<li><a href="{{.}}">{{.}}</a></li>{{end}}</ul>
{{else}}<p>This host has not published a browser player that can be reached from the internet.</p>{{end}}
<p>With the join tool: <code>join {{.Code}} --name YOURNAME</code></p>
</body></html>
`))

// pageData is what the invite page shows.
type pageData struct {
	Code coord.Code
	Play []string
}

// servePage serves the invite link /+CODE: the browser player's page
// when the coordinator has one (ServerConfig.Player), else links to the
// host's own.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.PathValue("page"), "+") {
		http.NotFound(w, r)
		return
	}
	if !s.lookups.allow(r) {
		tooMany(w)
		return
	}
	code, err := coord.ParseCode(r.PathValue("page"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	h := s.hosts[code]
	s.mu.Unlock()
	if h == nil {
		s.m.lookups.WithLabelValues("unknown").Inc()
		http.Error(w, "No host is registered as "+string(code)+": check the link, and ask your friend whether their host is running.", http.StatusNotFound)
		return
	}
	s.m.lookups.WithLabelValues("found").Inc()
	if s.cfg.Player != nil {
		// The player's own page: it reads the code from the link's path.
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = "/play", ""
		s.cfg.Player.ServeHTTP(w, r2)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	page.Execute(w, pageData{Code: code, Play: h.reachNow().Play})
}

// serveIndex says what this server is.
func (s *Server) serveIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("lockhost coordinator: open an invite link (/+CODE) or join with: join +CODE --coordinator URL\n"))
}
