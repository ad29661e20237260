module example.com/widgets

go 1.22

require k8s.io/api v0.29.0
