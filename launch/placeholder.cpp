int launch_placeholder;
