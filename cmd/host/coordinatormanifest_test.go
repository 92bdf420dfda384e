package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestCoordinatorManifest holds deploy/coordinator to host coordinator:
// the container runs the coordinator with options it has, listening on
// the port the container and the Service name.
func TestCoordinatorManifest(t *testing.T) {
	b, err := os.ReadFile("../../deploy/coordinator/coordinator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var deploy struct {
		Kind string
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args  []string
						Ports []struct {
							Name          string
							ContainerPort int `yaml:"containerPort"`
						}
					}
				}
			}
			Ports []struct {
				TargetPort string `yaml:"targetPort"`
			}
		}
	}
	flags := map[string]bool{}
	for _, f := range coordinatorCommand().Flags {
		for _, n := range f.Names() {
			flags[n] = true
		}
	}
	kinds := map[string]bool{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		if err := dec.Decode(&deploy); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		kinds[deploy.Kind] = true
		switch deploy.Kind {
		case "Deployment":
			c := deploy.Spec.Template.Spec.Containers[0]
			if len(c.Args) == 0 || c.Args[0] != "coordinator" {
				t.Fatalf("the container runs %v, not host coordinator", c.Args)
			}
			for _, a := range c.Args[1:] {
				name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if !flags[name] {
					t.Errorf("the manifest gives --%s, which host coordinator does not have", name)
				}
				if name == "listen" && (len(c.Ports) == 0 || !strings.HasSuffix(value, ":8443") || c.Ports[0].ContainerPort != 8443 || c.Ports[0].Name != "https") {
					t.Errorf("--listen=%s and the container's ports %+v disagree", value, c.Ports)
				}
			}
		case "Service":
			if len(deploy.Spec.Ports) != 1 || deploy.Spec.Ports[0].TargetPort != "https" {
				t.Errorf("the Service's ports %+v do not reach the container's https port", deploy.Spec.Ports)
			}
		}
		deploy.Spec.Ports = nil
		deploy.Spec.Template.Spec.Containers = nil
	}
	if !kinds["Deployment"] || !kinds["Service"] {
		t.Fatalf("deploy/coordinator holds %v, want a Deployment and a Service", kinds)
	}
}
