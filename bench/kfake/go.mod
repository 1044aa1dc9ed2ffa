// franz-go's fake cluster (pkg/kfake, which has no tagged version: a pseudo-version of its commit) as a standalone
// broker for the bench scripts: `make kfake` builds main.go into .cache/kfake/kfake (bench/peers.py runs it).
// franz-go itself is raised to v1.22.3 over the v1.21.7 kfake's go.mod asks for: this kfake calls kversion's
// EachSupportedFeature, which v1.21.7 lacks (kfake is built inside franz-go's own tree upstream).
module kafkamock.bench/kfake

go 1.26.0

require github.com/twmb/franz-go/pkg/kfake v0.0.0-20260918054303-01f206a7e32c

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
	github.com/twmb/franz-go v1.22.3 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.15.1 // indirect
)
