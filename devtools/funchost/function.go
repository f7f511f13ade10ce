package funchost

import (
	"fmt"
	"strings"
)

type triggerKind int

const (
	triggerHTTP triggerKind = iota + 1
	triggerQueue
	triggerTimer
)

// queueOutput is a queue output binding resolved against the app settings.
type queueOutput struct {
	name  string // binding name in Outputs
	queue string // resolved queue name
	conn  string // resolved connection string
}

// function is one function of an app, its bindings resolved against the app settings.
type function struct {
	app     *app
	name    string
	kind    triggerKind
	trigger binding // the trigger binding with queueName/schedule resolved
	// HTTP
	route     *route
	methods   map[string]bool // upper-case; empty means every method
	authLevel string          // anonymous | function | admin
	httpOut   string          // name of the http output binding ("res" or "$return"), "" if none
	forward   bool
	// queue trigger
	queueConn string
	// timer
	schedule *schedule
	outputs  []queueOutput
}

func (f *function) String() string { return f.name }

// newFunction classifies a function.json and resolves its settings.
func newFunction(a *app, name string, fj *functionJSON, settings map[string]string) (*function, error) {
	f := &function{app: a, name: name}
	var triggers, others int
	for _, b := range fj.Bindings {
		switch strings.ToLower(b.Direction) {
		case "in":
			switch strings.ToLower(b.Type) {
			case "httptrigger":
				f.kind, f.trigger = triggerHTTP, b
				triggers++
			case "queuetrigger":
				f.kind, f.trigger = triggerQueue, b
				triggers++
			case "timertrigger":
				f.kind, f.trigger = triggerTimer, b
				triggers++
			default:
				return nil, fmt.Errorf("function %s: input binding type %q is not supported by this host", name, b.Type)
			}
		case "out":
			others++
			switch strings.ToLower(b.Type) {
			case "http":
				f.httpOut = b.Name
			case "queue":
				q, err := resolveSetting(b.QueueName, settings)
				if err != nil {
					return nil, fmt.Errorf("function %s: binding %s: %w", name, b.Name, err)
				}
				conn, err := connection(b.Connection, settings)
				if err != nil {
					return nil, fmt.Errorf("function %s: binding %s: %w", name, b.Name, err)
				}
				f.outputs = append(f.outputs, queueOutput{name: b.Name, queue: strings.ToLower(q), conn: conn})
			default:
				return nil, fmt.Errorf("function %s: output binding type %q is not supported by this host", name, b.Type)
			}
		default:
			return nil, fmt.Errorf("function %s: binding %s: direction %q must be in or out", name, b.Name, b.Direction)
		}
	}
	if triggers != 1 {
		return nil, fmt.Errorf("function %s: want exactly one trigger binding, found %d", name, triggers)
	}
	switch f.kind {
	case triggerHTTP:
		tmpl := name
		if f.trigger.Route != nil {
			tmpl = *f.trigger.Route
		}
		r, err := parseRoute(joinRoute(a.routePrefix, tmpl))
		if err != nil {
			return nil, fmt.Errorf("function %s: %w", name, err)
		}
		f.route = r
		f.methods = map[string]bool{}
		for _, m := range f.trigger.Methods {
			f.methods[strings.ToUpper(m)] = true
		}
		f.authLevel = strings.ToLower(f.trigger.AuthLevel)
		switch f.authLevel {
		case "":
			f.authLevel = "function" // the real host's default
		case "anonymous", "function", "admin":
		default:
			return nil, fmt.Errorf("function %s: authLevel %q: want anonymous, function or admin", name, f.trigger.AuthLevel)
		}
		f.forward = a.host.CustomHandler.EnableForwardingHTTPRequest && others == 1 && f.httpOut != "" && len(f.outputs) == 0
	case triggerQueue:
		q, err := resolveSetting(f.trigger.QueueName, settings)
		if err != nil {
			return nil, fmt.Errorf("function %s: %w", name, err)
		}
		if q == "" {
			return nil, fmt.Errorf("function %s: queueTrigger has no queueName", name)
		}
		f.trigger.QueueName = strings.ToLower(q)
		if f.queueConn, err = connection(f.trigger.Connection, settings); err != nil {
			return nil, fmt.Errorf("function %s: %w", name, err)
		}
	case triggerTimer:
		s, err := resolveSetting(f.trigger.Schedule, settings)
		if err != nil {
			return nil, fmt.Errorf("function %s: %w", name, err)
		}
		if f.schedule, err = parseSchedule(s); err != nil {
			return nil, fmt.Errorf("function %s: schedule: %w", name, err)
		}
	}
	return f, nil
}

// connection returns the connection string held by the app setting named by a binding's
// connection property (default AzureWebJobsStorage).
func connection(name string, settings map[string]string) (string, error) {
	if name == "" {
		name = "AzureWebJobsStorage"
	}
	if v := settings[name]; v != "" {
		return v, nil
	}
	// The real host also accepts the setting with the AzureWebJobs prefix.
	if v := settings["AzureWebJobs"+name]; v != "" {
		return v, nil
	}
	return "", fmt.Errorf("storage connection: app setting %s is not set", name)
}

func joinRoute(prefix, tmpl string) string {
	prefix = strings.Trim(prefix, "/")
	tmpl = strings.Trim(tmpl, "/")
	switch {
	case prefix == "":
		return tmpl
	case tmpl == "":
		return prefix
	}
	return prefix + "/" + tmpl
}
