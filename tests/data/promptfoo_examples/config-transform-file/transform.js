module.exports = (output, context) => {
  // context.vars, context.prompt
  // ...
  return output.toUpperCase();
};
