package funchost

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// hostJSON is the part of host.json this host reads.
type hostJSON struct {
	Version         string   `json:"version"`
	FunctionTimeout timeSpan `json:"functionTimeout"`
	CustomHandler   struct {
		Description struct {
			DefaultExecutablePath string   `json:"defaultExecutablePath"`
			WorkingDirectory      string   `json:"workingDirectory"`
			Arguments             []string `json:"arguments"`
		} `json:"description"`
		EnableForwardingHTTPRequest bool `json:"enableForwardingHttpRequest"`
	} `json:"customHandler"`
	Extensions struct {
		HTTP struct {
			RoutePrefix *string `json:"routePrefix"`
		} `json:"http"`
		Queues struct {
			BatchSize          *int     `json:"batchSize"`
			NewBatchThreshold  *int     `json:"newBatchThreshold"`
			MaxDequeueCount    *int     `json:"maxDequeueCount"`
			VisibilityTimeout  timeSpan `json:"visibilityTimeout"`
			MaxPollingInterval timeSpan `json:"maxPollingInterval"`
			MessageEncoding    string   `json:"messageEncoding"`
		} `json:"queues"`
	} `json:"extensions"`
}

// queueSettings are the effective extensions.queues values with the real host's defaults.
type queueSettings struct {
	BatchSize          int
	NewBatchThreshold  int
	MaxDequeueCount    int
	VisibilityTimeout  time.Duration
	MaxPollingInterval time.Duration
	Base64             bool
}

func (h *hostJSON) queues() (queueSettings, error) {
	q := h.Extensions.Queues
	s := queueSettings{BatchSize: 16, MaxDequeueCount: 5, Base64: true,
		VisibilityTimeout:  q.VisibilityTimeout.or(0),
		MaxPollingInterval: q.MaxPollingInterval.or(time.Minute)}
	if q.BatchSize != nil {
		if *q.BatchSize < 1 || *q.BatchSize > 32 {
			return s, fmt.Errorf("extensions.queues.batchSize %d: must be 1..32", *q.BatchSize)
		}
		s.BatchSize = *q.BatchSize
	}
	// The real host's default is batchSize/2 per core; one core is assumed here.
	s.NewBatchThreshold = s.BatchSize / 2
	if q.NewBatchThreshold != nil {
		if *q.NewBatchThreshold < 0 {
			return s, fmt.Errorf("extensions.queues.newBatchThreshold %d: must be >= 0", *q.NewBatchThreshold)
		}
		s.NewBatchThreshold = *q.NewBatchThreshold
	}
	if q.MaxDequeueCount != nil {
		if *q.MaxDequeueCount < 1 {
			return s, fmt.Errorf("extensions.queues.maxDequeueCount %d: must be >= 1", *q.MaxDequeueCount)
		}
		s.MaxDequeueCount = *q.MaxDequeueCount
	}
	if s.VisibilityTimeout < 0 || s.VisibilityTimeout > 7*24*time.Hour {
		return s, fmt.Errorf("extensions.queues.visibilityTimeout %s: must be 0..7 days", s.VisibilityTimeout)
	}
	if s.MaxPollingInterval < 100*time.Millisecond {
		return s, fmt.Errorf("extensions.queues.maxPollingInterval %s: must be at least 100ms", s.MaxPollingInterval)
	}
	switch strings.ToLower(q.MessageEncoding) {
	case "", "base64":
	case "none":
		s.Base64 = false
	default:
		return s, fmt.Errorf("extensions.queues.messageEncoding %q: want base64 or none", q.MessageEncoding)
	}
	return s, nil
}

// binding is one entry of function.json's bindings.
type binding struct {
	Type         string   `json:"type"`
	Direction    string   `json:"direction"`
	Name         string   `json:"name"`
	AuthLevel    string   `json:"authLevel"`
	Methods      []string `json:"methods"`
	Route        *string  `json:"route"`
	QueueName    string   `json:"queueName"`
	Connection   string   `json:"connection"`
	Schedule     string   `json:"schedule"`
	RunOnStartup bool     `json:"runOnStartup"`
}

type functionJSON struct {
	Bindings []binding `json:"bindings"`
	Disabled bool      `json:"disabled"`
}

// readApp reads an app folder: host.json and every direct subfolder holding a function.json.
func readApp(dir string) (*hostJSON, map[string]*functionJSON, error) {
	b, err := os.ReadFile(filepath.Join(dir, "host.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("app %s: %w", dir, err)
	}
	var h hostJSON
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, nil, fmt.Errorf("app %s: host.json: %w", dir, err)
	}
	if h.CustomHandler.Description.DefaultExecutablePath == "" {
		return nil, nil, fmt.Errorf("app %s: host.json: customHandler.description.defaultExecutablePath is empty", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("app %s: %w", dir, err)
	}
	fns := map[string]*functionJSON{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name(), "function.json")
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("app %s: %w", dir, err)
		}
		var f functionJSON
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, nil, fmt.Errorf("app %s: %s: %w", dir, p, err)
		}
		fns[e.Name()] = &f
	}
	return &h, fns, nil
}

// resolveSetting replaces a whole-value %NAME% with the app setting NAME.
func resolveSetting(v string, settings map[string]string) (string, error) {
	if len(v) > 2 && strings.HasPrefix(v, "%") && strings.HasSuffix(v, "%") {
		name := v[1 : len(v)-1]
		s, ok := settings[name]
		if !ok || s == "" {
			return "", fmt.Errorf("app setting %s (referenced as %s) is not set", name, v)
		}
		return s, nil
	}
	return v, nil
}
