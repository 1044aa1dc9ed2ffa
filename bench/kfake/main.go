// Command kfake runs franz-go's fake Kafka cluster (pkg/kfake) as one broker in its own process, as a peer of
// kafkamock in the bench scripts (bench/peers.py). It is ours, not kfake's own main.go: that one fixes ports
// 9092-9094, seeds a topic and turns on block and mutex profiling, which slows every lock it takes.
//
//	kfake --port 0 [--data-dir DIR] [-c key=value ...] [--log-level warn]
//
// It listens on 127.0.0.1 only, prints one line "kfake ready: bootstrap.servers=HOST:PORT" once the listener is
// up, logs at the given level to stderr, and on SIGTERM or SIGINT closes the cluster (with --data-dir: saving
// its state) and exits 0.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

// configFlags collects repeated -c key=value broker configs.
type configFlags map[string]string

func (f configFlags) String() string { return fmt.Sprint(map[string]string(f)) }

func (f configFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("expected key=value, got %q", s)
	}
	f[k] = v
	return nil
}

var levels = map[string]kfake.LogLevel{
	"none": kfake.LogLevelNone, "error": kfake.LogLevelError, "warn": kfake.LogLevelWarn,
	"info": kfake.LogLevelInfo, "debug": kfake.LogLevelDebug,
}

func main() {
	port := flag.Int("port", 0, "port on 127.0.0.1 (0: a free one)")
	dataDir := flag.String("data-dir", "", "keep the log in this directory (kfake.DataDir) instead of memory only")
	logLevel := flag.String("log-level", "warn", "none, error, warn, info or debug (to stderr)")
	configs := configFlags{}
	flag.Var(configs, "c", "broker config key=value (repeatable)")
	flag.Parse()

	level, ok := levels[strings.ToLower(*logLevel)]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown --log-level %q\n", *logLevel)
		os.Exit(2)
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(*port),
		kfake.WithLogger(kfake.BasicLogger(os.Stderr, level)),
	}
	if *dataDir != "" {
		opts = append(opts, kfake.DataDir(*dataDir))
	}
	if len(configs) > 0 {
		opts = append(opts, kfake.BrokerConfigs(configs))
	}
	// Listen for the signals before the ready line, so a SIGTERM right after it is never lost.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, os.Interrupt)

	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfake: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("kfake ready: bootstrap.servers=%s\n", strings.Join(cluster.ListenAddrs(), ","))
	os.Stdout.Sync()

	<-signals
	cluster.Close()
}
