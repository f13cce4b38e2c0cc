int trainer_placeholder;
