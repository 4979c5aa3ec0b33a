#!/bin/bash
# tests/reset_shapes.t with XDP on the router's interfaces (--enforce-on
# NETNS/IFNAME:xdp, as a user would write it): the reset is handed from XDP
# to vigil's TC ingress program, which resets both ends.
VIGIL_SHAPES_XDP=1 exec bash "$(dirname "$0")/reset_shapes.t"
