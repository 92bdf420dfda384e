module github.com/lockhost/lockhost

go 1.26.8

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/hashicorp/go-msgpack/v2 v2.1.5
	github.com/klauspost/compress v1.20.3
	github.com/urfave/cli/v2 v2.27.7
)

require (
	github.com/cpuguy83/go-md2man/v2 v2.0.7 // indirect
	github.com/russross/blackfriday/v2 v2.1.0 // indirect
	github.com/xrash/smetrics v0.0.0-20240521201337-686a1a2994c1 // indirect
)
