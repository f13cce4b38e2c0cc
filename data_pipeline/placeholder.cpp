int data_placeholder;
