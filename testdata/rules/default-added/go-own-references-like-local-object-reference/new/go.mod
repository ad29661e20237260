module example.com/widgets

go 1.22

require (
	github.com/fluxcd/pkg/apis/meta v1.6.0
	k8s.io/api v0.29.0
)
